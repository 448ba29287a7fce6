"""`KinesisSources` and `KinesisSinks`: thin wrappers over the JVM builders of the same names.

On a classic session every method forwards to the JVM builder through py4j, so option names, defaults and
validation exist once, in Scala. On a Spark Connect session (no JVM in this process) each method records the
options it maps to, with the keys of the option table generated from the Scala one (``_options.json``), and
``build`` hands them to ``format("kinesis").options(...)``: the connector checks them on the server. Arguments are
checked here first in both cases, so a wrong type fails with a message naming the argument.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar, Union

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.streaming.readwriter import DataStreamWriter
from pyspark.sql.readwriter import DataFrameWriter

from pyspark_kinesis import _options
from pyspark_kinesis._connect import connect_mode, is_connect_dataframe, is_connect_session, scala_string
from pyspark_kinesis._jvm import call, check_bool, check_int, check_str, connector
from pyspark_kinesis.retry import RetryStrategy

B = TypeVar("B", bound="_Builder")

#: The data source's short name, as ``format(...)`` takes it.
FORMAT = "kinesis"
#: The sink's input columns the generic form ``KinesisSinks.kinesis(stream, key, data)`` selects.
PARTITION_KEY_COLUMN = "partitionKey"
DATA_COLUMN = "data"


def _put(settings: dict[str, str], key: str, value: str) -> dict[str, str]:
    """``settings`` with ``key`` set to ``value``; keys are case-insensitive, as Spark matches them, so an earlier
    setting of the same key in another case goes."""
    updated = {k: v for k, v in settings.items() if k.lower() != key.lower()}
    updated[key] = value
    return updated


def _check_session(spark: object) -> None:
    if not isinstance(spark, SparkSession) and not is_connect_session(spark):
        raise TypeError(f"spark must be a SparkSession, got {type(spark).__name__}")


class _Builder:
    """Methods the source and sink builders share (the JVM's ``KinesisBuilder``).

    Exactly one of ``jbuilder`` (classic session: the JVM builder) and ``settings`` (Spark Connect: the options set
    so far) is given.
    """

    def __init__(self, jbuilder: Any, settings: dict[str, str] | None = None) -> None:
        self._j = jbuilder
        self._settings = settings

    def _copy(self: B, jbuilder: Any, settings: dict[str, str] | None) -> B:
        clone = copy.copy(self)  # keeps what a subclass adds (the sink's columns)
        clone._j = jbuilder
        clone._settings = settings
        return clone

    def _next(self: B, jbuilder: Any) -> B:
        return self._copy(jbuilder, None)

    def _set(self: B, jvm: Callable[[Any], Any], *options: tuple[str, str | bool | int | float]) -> B:
        """Calls ``jvm`` on the JVM builder (classic), or sets each (option name, value) as the JVM builder would."""
        if self._settings is None:
            return self._next(call(lambda: jvm(self._j)))
        settings = self._settings
        for name, value in options:
            settings = _put(settings, _options.key(name), scala_string(value))
        return self._copy(None, settings)

    def withRegion(self: B, region: str) -> B:
        """Set ``region``, e.g. ``withRegion("eu-west-1")``."""
        check_str("region", region)
        return self._set(lambda j: j.withRegion(region), ("region", region))

    def withEndpoint(self: B, endpoint: str) -> B:
        """Set ``endpoint``, e.g. ``withEndpoint("http://127.0.0.1:4566")`` for a local emulator."""
        check_str("endpoint", endpoint)
        return self._set(lambda j: j.withEndpoint(endpoint), ("endpoint", endpoint))

    def withCredentials(self: B, accessKey: str, secretKey: str, sessionToken: str | None = None) -> B:
        """Static credentials, e.g. ``withCredentials("AKIA...", "secret")``; never logged."""
        check_str("accessKey", accessKey)
        check_str("secretKey", secretKey)
        if sessionToken is None:
            return self._set(
                lambda j: j.withCredentials(accessKey, secretKey), ("awsAccessKey", accessKey), ("awsSecretKey", secretKey)
            )
        check_str("sessionToken", sessionToken)
        return self._set(
            lambda j: j.withCredentials(accessKey, secretKey, sessionToken),
            ("awsAccessKey", accessKey), ("awsSecretKey", secretKey), ("awsSessionToken", sessionToken),
        )

    def withProfile(self: B, profile: str) -> B:
        """A named profile of the AWS config files, e.g. ``withProfile("dev")``."""
        check_str("profile", profile)
        return self._set(lambda j: j.withProfile(profile), ("awsProfile", profile))

    def withRoleArn(self: B, roleArn: str, externalId: str | None = None) -> B:
        """Assume an IAM role, e.g. ``withRoleArn("arn:aws:iam::123456789012:role/reader")``."""
        check_str("roleArn", roleArn)
        if externalId is None:
            return self._set(lambda j: j.withRoleArn(roleArn), ("roleArn", roleArn))
        check_str("externalId", externalId)
        return self._set(lambda j: j.withRoleArn(roleArn, externalId), ("roleArn", roleArn), ("roleExternalId", externalId))

    def withRetryStrategy(self: B, strategy: RetryStrategy) -> B:
        """e.g. ``withRetryStrategy(RetryStrategies.indefinitely(250))``."""
        if not isinstance(strategy, RetryStrategy):
            raise TypeError(f"strategy must be a RetryStrategy (from RetryStrategies), got {type(strategy).__name__}")
        if self._settings is None and strategy._j is not None:
            return self._next(call(lambda: self._j.withRetryStrategy(strategy._j)))
        builder = self
        for key, value in strategy.options().items():
            builder = builder.withOption(key, value)
        return builder

    def withOption(self: B, key: str, value: str) -> B:
        """Any option of the connector's table, by key, e.g. ``withOption("shardFetchInterval", "5s")``."""
        check_str("key", key)
        if not isinstance(value, str):
            raise TypeError(f"value must be a str, got {type(value).__name__}")
        if self._settings is None:
            return self._next(call(lambda: self._j.withOption(key, value)))
        return self._copy(None, _put(self._settings, key, value))

    def options(self) -> dict[str, str]:
        """The exact options ``build`` applies.

        Example::

            >>> KinesisSources.kinesis("clicks").withRegion("eu-west-1").options()
            {'region': 'eu-west-1', 'streamName': 'clicks'}
        """
        if self._settings is not None:
            return dict(sorted(self._settings.items()))
        return {str(k): str(v) for k, v in dict(call(lambda: self._j.options())).items()}

    def __repr__(self) -> str:
        if self._settings is not None:
            return f"{type(self).__name__}({_options.redact(self.options())})"
        return str(self._j.toString())


class KinesisSourceBuilder(_Builder):
    """Made by :meth:`KinesisSources.kinesis`."""

    def withInitialPosition(self, position: str) -> KinesisSourceBuilder:
        """``latest`` (the default), ``trim_horizon``, ``earliest``, Databricks' ``{"at_timestamp": ..., "format": ...}``
        or a JSON map of per-shard positions."""
        check_str("position", position)
        return self._set(lambda j: j.withInitialPosition(position), ("initialPosition", position))

    def withInitialTimestamp(self, epochMillis: int) -> KinesisSourceBuilder:
        """Start at records that arrived at or after ``epochMillis``."""
        check_int("epochMillis", epochMillis, minimum=0)
        return self._set(
            lambda j: j.withInitialTimestamp(epochMillis), ("initialPosition", "at_timestamp"), ("initialTimestamp", epochMillis)
        )

    def withMaxRecordsPerTrigger(self, records: int) -> KinesisSourceBuilder:
        """Admission control: at most ``records`` per micro-batch over all shards."""
        check_int("records", records)
        return self._set(lambda j: j.withMaxRecordsPerTrigger(records), ("maxRecordsPerTrigger", records))

    def withMaxRecordsPerFetch(self, records: int) -> KinesisSourceBuilder:
        """The ``Limit`` of one GetRecords call (1..10000)."""
        check_int("records", records)
        return self._set(lambda j: j.withMaxRecordsPerFetch(records), ("maxRecordsPerFetch", records))

    def withMaxBytesPerTrigger(self, bytes: int) -> KinesisSourceBuilder:
        """Admission control: at most ``bytes`` per micro-batch over all shards."""
        check_int("bytes", bytes)
        return self._set(lambda j: j.withMaxBytesPerTrigger(bytes), ("maxBytesPerTrigger", bytes))

    def withMaxFetchRate(self, megabytesPerSecond: float) -> KinesisSourceBuilder:
        """A hard cap in MB/s per shard (at most 2, the read quota)."""
        if isinstance(megabytesPerSecond, bool) or not isinstance(megabytesPerSecond, (int, float)):
            raise TypeError(f"megabytesPerSecond must be a number, got {type(megabytesPerSecond).__name__}")
        rate = float(megabytesPerSecond)
        return self._set(lambda j: j.withMaxFetchRate(rate), ("maxFetchRate", rate))

    def withMinFetchPeriod(self, period: str) -> KinesisSourceBuilder:
        """Least time between two GetRecords calls on a shard, e.g. ``"200ms"``."""
        check_str("period", period)
        return self._set(lambda j: j.withMinFetchPeriod(period), ("minFetchPeriod", period))

    def withMaxFetchDuration(self, duration: str) -> KinesisSourceBuilder:
        """The longest a snapshot waits for its shards before a batch is planned, e.g. ``"10s"``."""
        check_str("duration", duration)
        return self._set(lambda j: j.withMaxFetchDuration(duration), ("maxFetchDuration", duration))

    def withShardFetchInterval(self, interval: str) -> KinesisSourceBuilder:
        """How often shards are listed to discover resharding, e.g. ``"1s"``."""
        check_str("interval", interval)
        return self._set(lambda j: j.withShardFetchInterval(interval), ("shardFetchInterval", interval))

    def withShardsPerTask(self, shards: int) -> KinesisSourceBuilder:
        """How many shards one Spark task reads."""
        check_int("shards", shards)
        return self._set(lambda j: j.withShardsPerTask(shards), ("shardsPerTask", shards))

    def withFailOnDataLoss(self, fail: bool) -> KinesisSourceBuilder:
        """Fail (default), or warn and go on, when records the query has not read can no longer be read."""
        check_bool("fail", fail)
        return self._set(lambda j: j.withFailOnDataLoss(fail), ("failOnDataLoss", fail))

    def withFetchBufferSize(self, size: str) -> KinesisSourceBuilder:
        """Bytes of prefetched records one executor may hold, e.g. ``"256m"``; prefetching pauses when full."""
        check_str("size", size)
        return self._set(lambda j: j.withFetchBufferSize(size), ("fetchBufferSize", size))

    def withMaxIdlePollInterval(self, interval: str) -> KinesisSourceBuilder:
        """The longest an idle shard goes unpolled, e.g. ``"10s"`` (the default); ``"1s"`` polls every idle
        shard every second (lower latency after a silence, more calls)."""
        check_str("interval", interval)
        return self._set(lambda j: j.withMaxIdlePollInterval(interval), ("maxIdlePollInterval", interval))

    def withEnhancedFanOut(self, consumerName: str | None = None) -> KinesisSourceBuilder:
        """Read with enhanced fan-out (``consumerMode=efo``): 2 MiB/s per shard for this query alone, pushed.
        The consumer is ``consumerName`` on each stream, or one named after the query; registered if missing.

        Example::

            >>> KinesisSources.kinesis("clicks").withEnhancedFanOut("clicks-app").build(spark)
        """
        if consumerName is None:
            return self._set(lambda j: j.withEnhancedFanOut(), ("consumerMode", "efo"))
        check_str("consumerName", consumerName)
        return self._set(
            lambda j: j.withEnhancedFanOut(consumerName), ("consumerMode", "efo"), ("consumerName", consumerName)
        )

    def withRequireConsumerDeregistration(self, deregister: bool) -> KinesisSourceBuilder:
        """Deregister the enhanced fan-out consumer the query registered when it stops (default: keep it)."""
        check_bool("deregister", deregister)
        return self._set(
            lambda j: j.withRequireConsumerDeregistration(deregister), ("requireConsumerDeregistration", deregister)
        )

    def build(self, spark: SparkSession) -> DataFrame:
        """A streaming DataFrame of the source schema.

        Example::

            >>> events = KinesisSources.kinesis("clicks").withInitialPosition("trim_horizon").build(spark)
        """
        _check_session(spark)
        if self._settings is not None or is_connect_session(spark):
            return self._validated(spark.readStream.format(FORMAT).options(**self.options()).load())
        return DataFrame(call(lambda: self._j.build(spark._jsparkSession)), spark)

    def buildBatch(self, spark: SparkSession) -> DataFrame:
        """A batch DataFrame: from the initial position to the tip when the read is planned."""
        _check_session(spark)
        if self._settings is not None or is_connect_session(spark):
            return self._validated(spark.read.format(FORMAT).options(**self.options()).load())
        return DataFrame(call(lambda: self._j.buildBatch(spark._jsparkSession)), spark)

    @staticmethod
    def _validated(df: DataFrame) -> DataFrame:
        """Spark Connect: ``load()`` only describes the read; asking for the schema has the server resolve it, where
        the connector checks the options (the JVM builder's checks), so a bad value fails here, as ValueError."""
        call(lambda: df.schema)
        return df


class KinesisSinkBuilder(_Builder):
    """Made by :meth:`KinesisSinks.kinesis`."""

    def __init__(
        self, jbuilder: Any, settings: dict[str, str] | None = None, columns: tuple[Column, Column] | None = None
    ) -> None:
        super().__init__(jbuilder, settings)
        self._columns = columns

    def _input(self, df: DataFrame) -> DataFrame:
        """Spark Connect: what the JVM builder writes, the generic form's key (as a string) and data columns."""
        if self._columns is None:
            return df
        key, value = self._columns
        return df.select(key.cast("string").alias(PARTITION_KEY_COLUMN), value.alias(DATA_COLUMN))

    def withMaxRecordsPerRequest(self, records: int) -> KinesisSinkBuilder:
        """Records per PutRecords request (1..500)."""
        check_int("records", records)
        return self._set(lambda j: j.withMaxRecordsPerRequest(records), ("maxRecordsPerRequest", records))

    def withMaxBytesPerRequest(self, bytes: int) -> KinesisSinkBuilder:
        """Bytes per PutRecords request."""
        check_int("bytes", bytes)
        return self._set(lambda j: j.withMaxBytesPerRequest(bytes), ("maxBytesPerRequest", bytes))

    def withClusterByPartitionKey(self, cluster: bool) -> KinesisSinkBuilder:
        """Cluster the input by partition key before the write (a shuffle), so one task writes each key."""
        check_bool("cluster", cluster)
        return self._set(lambda j: j.withClusterByPartitionKey(cluster), ("clusterByPartitionKey", cluster))

    def withFlowControl(self, mode: str) -> KinesisSinkBuilder:
        """``adaptive`` (the default: each throttling shard paced at its own send rate), ``ladder``, ``aimd`` or ``off``."""
        check_str("mode", mode)
        return self._set(lambda j: j.withFlowControl(mode), ("flowControl", mode))

    def withMaxInFlightRequests(self, requests: int) -> KinesisSinkBuilder:
        """PutRecords requests in flight per task."""
        check_int("requests", requests)
        return self._set(lambda j: j.withMaxInFlightRequests(requests), ("maxInFlightRequests", requests))

    def withPreserveKeyOrder(self, preserve: bool) -> KinesisSinkBuilder:
        """Keep each key's order even when records are resent (at some throughput cost)."""
        check_bool("preserve", preserve)
        return self._set(lambda j: j.withPreserveKeyOrder(preserve), ("preserveKeyOrder", preserve))

    def withAggregation(
        self, maxBytes: int | None = None, maxRecords: int | None = None, lingerMs: int | None = None
    ) -> KinesisSinkBuilder:
        """``aggregation=kpl``: pack user records per shard into KPL aggregates (many small records then fill a
        shard's byte quota instead of its 1000 records/s). Readers must de-aggregate: this connector's source, the
        KCL, ``aws-kinesis-agg``. The limits go together: give all three or none (defaults 50 KiB, 10000, 100 ms).

        Example::

            >>> KinesisSinks.kinesis("clicks").withAggregation(65536, 1000, 50).build(events)
        """
        limits = (maxBytes, maxRecords, lingerMs)
        if all(v is None for v in limits):
            return self._set(lambda j: j.withAggregation(), ("aggregation", "kpl"))
        if any(v is None for v in limits):
            raise ValueError("maxBytes, maxRecords and lingerMs go together: give all three or none")
        size = check_int("maxBytes", maxBytes, minimum=1024)
        records = check_int("maxRecords", maxRecords)
        linger = check_int("lingerMs", lingerMs)
        return self._set(
            lambda j: j.withAggregation(size, records, linger),
            ("aggregation", "kpl"), ("aggregationMaxBytes", size), ("aggregationMaxRecords", records),
            ("aggregationLingerMs", linger),
        )

    def build(self, df: DataFrame) -> Union[DataStreamWriter, DataFrameWriter]:
        """A configured ``DataStreamWriter`` for a streaming DataFrame, a ``DataFrameWriter`` (append) for a batch one.

        Example::

            >>> query = KinesisSinks.kinesis("clicks").build(events).option("checkpointLocation", "/tmp/cp").start()
        """
        if not isinstance(df, DataFrame):
            raise TypeError(f"df must be a DataFrame, got {type(df).__name__}")
        if df.isStreaming:
            return self.buildStreaming(df)
        return self.buildBatch(df)

    def buildStreaming(self, df: DataFrame) -> DataStreamWriter:
        """``build`` for a streaming DataFrame, typed."""
        if not isinstance(df, DataFrame) or not df.isStreaming:
            raise TypeError("df must be a streaming DataFrame; use buildBatch for a batch one")
        if self._settings is not None or is_connect_dataframe(df):
            return self._input(df).writeStream.format(FORMAT).options(**self.options())
        streaming = DataStreamWriter(df)
        streaming._jwrite = call(lambda: self._j.buildStreaming(df._jdf))
        return streaming

    def buildBatch(self, df: DataFrame) -> DataFrameWriter:
        """``build`` for a batch DataFrame, typed: a ``DataFrameWriter`` in append mode."""
        if not isinstance(df, DataFrame) or df.isStreaming:
            raise TypeError("df must be a batch DataFrame; use buildStreaming for a streaming one")
        if self._settings is not None or is_connect_dataframe(df):
            return self._input(df).write.format(FORMAT).mode("append").options(**self.options())
        batch = DataFrameWriter(df)
        batch._jwrite = call(lambda: self._j.buildBatch(df._jdf))
        return batch


class KinesisSources:
    """Entry point mirroring ``io.github.sparkkinesis.KinesisSources``; needs an active SparkSession (classic or
    Spark Connect)."""

    @staticmethod
    def kinesis(streamName: str) -> KinesisSourceBuilder:
        """A source builder for ``streamName`` (comma-separated for several streams)."""
        check_str("streamName", streamName)
        if connect_mode():
            return KinesisSourceBuilder(None, {_options.key("streamName"): streamName})
        return KinesisSourceBuilder(call(lambda: connector().KinesisSources.kinesis(streamName)))


class KinesisSinks:
    """Entry point mirroring ``io.github.sparkkinesis.KinesisSinks``; needs an active SparkSession (classic or
    Spark Connect)."""

    @staticmethod
    def kinesis(streamName: str, keyColumn: Column | None = None, valueColumn: Column | None = None) -> KinesisSinkBuilder:
        """A sink builder for ``streamName``; with ``keyColumn`` and ``valueColumn`` (Spark Columns, e.g.
        ``col("user")`` and ``to_json(struct("*"))``) for the partition key and the data.

        Example::

            >>> KinesisSinks.kinesis("clicks", col("user"), to_json(struct("*"))).build(df)
        """
        check_str("streamName", streamName)
        if (keyColumn is None) != (valueColumn is None):
            raise ValueError("keyColumn and valueColumn go together: give both or neither")
        settings = {_options.key("streamName"): streamName} if connect_mode() else None
        if keyColumn is None or valueColumn is None:
            if settings is not None:
                return KinesisSinkBuilder(None, settings)
            return KinesisSinkBuilder(call(lambda: connector().KinesisSinks.kinesis(streamName)))
        for name, c in (("keyColumn", keyColumn), ("valueColumn", valueColumn)):
            if not isinstance(c, Column):
                raise TypeError(f"{name} must be a pyspark.sql.Column, got {type(c).__name__}")
        columns = (keyColumn, valueColumn)
        if settings is not None:
            return KinesisSinkBuilder(None, settings, columns)
        return KinesisSinkBuilder(
            call(lambda: connector().KinesisSinks.kinesis(streamName, keyColumn._jc, valueColumn._jc)), None, columns
        )
