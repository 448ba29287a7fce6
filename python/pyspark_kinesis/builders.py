"""`KinesisSources` and `KinesisSinks`: thin wrappers over the JVM builders of the same names.

Every method forwards to the JVM builder, so option names, defaults and validation exist once, in Scala;
arguments are checked here first so a wrong type fails with a message naming the argument.
"""

from __future__ import annotations

from typing import Any, TypeVar, Union

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.streaming.readwriter import DataStreamWriter
from pyspark.sql.readwriter import DataFrameWriter

from pyspark_kinesis._jvm import call, check_bool, check_int, check_str, connector
from pyspark_kinesis.retry import RetryStrategy

B = TypeVar("B", bound="_Builder")


class _Builder:
    """Methods the source and sink builders share (the JVM's ``KinesisBuilder``)."""

    def __init__(self, jbuilder: Any) -> None:
        self._j = jbuilder

    def _next(self: B, jbuilder: Any) -> B:
        return type(self)(jbuilder)

    def withRegion(self: B, region: str) -> B:
        """Set ``region``, e.g. ``withRegion("eu-west-1")``."""
        check_str("region", region)
        return self._next(call(lambda: self._j.withRegion(region)))

    def withEndpoint(self: B, endpoint: str) -> B:
        """Set ``endpoint``, e.g. ``withEndpoint("http://127.0.0.1:4566")`` for a local emulator."""
        check_str("endpoint", endpoint)
        return self._next(call(lambda: self._j.withEndpoint(endpoint)))

    def withCredentials(self: B, accessKey: str, secretKey: str, sessionToken: str | None = None) -> B:
        """Static credentials, e.g. ``withCredentials("AKIA...", "secret")``; never logged."""
        check_str("accessKey", accessKey)
        check_str("secretKey", secretKey)
        if sessionToken is None:
            return self._next(call(lambda: self._j.withCredentials(accessKey, secretKey)))
        check_str("sessionToken", sessionToken)
        return self._next(call(lambda: self._j.withCredentials(accessKey, secretKey, sessionToken)))

    def withProfile(self: B, profile: str) -> B:
        """A named profile of the AWS config files, e.g. ``withProfile("dev")``."""
        check_str("profile", profile)
        return self._next(call(lambda: self._j.withProfile(profile)))

    def withRoleArn(self: B, roleArn: str, externalId: str | None = None) -> B:
        """Assume an IAM role, e.g. ``withRoleArn("arn:aws:iam::123456789012:role/reader")``."""
        check_str("roleArn", roleArn)
        if externalId is None:
            return self._next(call(lambda: self._j.withRoleArn(roleArn)))
        check_str("externalId", externalId)
        return self._next(call(lambda: self._j.withRoleArn(roleArn, externalId)))

    def withRetryStrategy(self: B, strategy: RetryStrategy) -> B:
        """e.g. ``withRetryStrategy(RetryStrategies.indefinitely(250))``."""
        if not isinstance(strategy, RetryStrategy):
            raise TypeError(f"strategy must be a RetryStrategy (from RetryStrategies), got {type(strategy).__name__}")
        return self._next(call(lambda: self._j.withRetryStrategy(strategy._j)))

    def withOption(self: B, key: str, value: str) -> B:
        """Any option of the connector's table, by key, e.g. ``withOption("shardFetchInterval", "5s")``."""
        check_str("key", key)
        if not isinstance(value, str):
            raise TypeError(f"value must be a str, got {type(value).__name__}")
        return self._next(call(lambda: self._j.withOption(key, value)))

    def options(self) -> dict[str, str]:
        """The exact options ``build`` applies.

        Example::

            >>> KinesisSources.kinesis("clicks").withRegion("eu-west-1").options()
            {'region': 'eu-west-1', 'streamName': 'clicks'}
        """
        return {str(k): str(v) for k, v in dict(call(lambda: self._j.options())).items()}

    def __repr__(self) -> str:
        return str(self._j.toString())


class KinesisSourceBuilder(_Builder):
    """Made by :meth:`KinesisSources.kinesis`."""

    def withInitialPosition(self, position: str) -> KinesisSourceBuilder:
        """``latest`` (the default), ``trim_horizon``, ``earliest``, Databricks' ``{"at_timestamp": ..., "format": ...}``
        or a JSON map of per-shard positions."""
        check_str("position", position)
        return self._next(call(lambda: self._j.withInitialPosition(position)))

    def withInitialTimestamp(self, epochMillis: int) -> KinesisSourceBuilder:
        """Start at records that arrived at or after ``epochMillis``."""
        check_int("epochMillis", epochMillis, minimum=0)
        return self._next(call(lambda: self._j.withInitialTimestamp(epochMillis)))

    def withMaxRecordsPerTrigger(self, records: int) -> KinesisSourceBuilder:
        """Admission control: at most ``records`` per micro-batch over all shards."""
        check_int("records", records)
        return self._next(call(lambda: self._j.withMaxRecordsPerTrigger(records)))

    def withMaxRecordsPerFetch(self, records: int) -> KinesisSourceBuilder:
        """The ``Limit`` of one GetRecords call (1..10000)."""
        check_int("records", records)
        return self._next(call(lambda: self._j.withMaxRecordsPerFetch(records)))

    def withMaxBytesPerTrigger(self, bytes: int) -> KinesisSourceBuilder:
        """Admission control: at most ``bytes`` per micro-batch over all shards."""
        check_int("bytes", bytes)
        return self._next(call(lambda: self._j.withMaxBytesPerTrigger(bytes)))

    def withMaxFetchRate(self, megabytesPerSecond: float) -> KinesisSourceBuilder:
        """A hard cap in MB/s per shard (at most 2, the read quota)."""
        if isinstance(megabytesPerSecond, bool) or not isinstance(megabytesPerSecond, (int, float)):
            raise TypeError(f"megabytesPerSecond must be a number, got {type(megabytesPerSecond).__name__}")
        return self._next(call(lambda: self._j.withMaxFetchRate(float(megabytesPerSecond))))

    def withMinFetchPeriod(self, period: str) -> KinesisSourceBuilder:
        """Least time between two GetRecords calls on a shard, e.g. ``"200ms"``."""
        check_str("period", period)
        return self._next(call(lambda: self._j.withMinFetchPeriod(period)))

    def withMaxFetchDuration(self, duration: str) -> KinesisSourceBuilder:
        """The longest a snapshot waits for its shards before a batch is planned, e.g. ``"10s"``."""
        check_str("duration", duration)
        return self._next(call(lambda: self._j.withMaxFetchDuration(duration)))

    def withShardFetchInterval(self, interval: str) -> KinesisSourceBuilder:
        """How often shards are listed to discover resharding, e.g. ``"1s"``."""
        check_str("interval", interval)
        return self._next(call(lambda: self._j.withShardFetchInterval(interval)))

    def withShardsPerTask(self, shards: int) -> KinesisSourceBuilder:
        """How many shards one Spark task reads."""
        check_int("shards", shards)
        return self._next(call(lambda: self._j.withShardsPerTask(shards)))

    def withFailOnDataLoss(self, fail: bool) -> KinesisSourceBuilder:
        """Fail (default), or warn and go on, when records the query has not read can no longer be read."""
        check_bool("fail", fail)
        return self._next(call(lambda: self._j.withFailOnDataLoss(fail)))

    def withFetchBufferSize(self, size: str) -> KinesisSourceBuilder:
        """Bytes of prefetched records one executor may hold, e.g. ``"256m"``; prefetching pauses when full."""
        check_str("size", size)
        return self._next(call(lambda: self._j.withFetchBufferSize(size)))

    def withMaxIdlePollInterval(self, interval: str) -> KinesisSourceBuilder:
        """The longest an idle shard goes unpolled, e.g. ``"10s"`` (the default); ``"1s"`` polls every idle
        shard every second (lower latency after a silence, more calls)."""
        check_str("interval", interval)
        return self._next(call(lambda: self._j.withMaxIdlePollInterval(interval)))

    def withEnhancedFanOut(self, consumerName: str | None = None) -> KinesisSourceBuilder:
        """Read with enhanced fan-out (``consumerMode=efo``): 2 MiB/s per shard for this query alone, pushed.
        The consumer is ``consumerName`` on each stream, or one named after the query; registered if missing.

        Example::

            >>> KinesisSources.kinesis("clicks").withEnhancedFanOut("clicks-app").build(spark)
        """
        if consumerName is None:
            return self._next(call(lambda: self._j.withEnhancedFanOut()))
        check_str("consumerName", consumerName)
        return self._next(call(lambda: self._j.withEnhancedFanOut(consumerName)))

    def withRequireConsumerDeregistration(self, deregister: bool) -> KinesisSourceBuilder:
        """Deregister the enhanced fan-out consumer the query registered when it stops (default: keep it)."""
        check_bool("deregister", deregister)
        return self._next(call(lambda: self._j.withRequireConsumerDeregistration(deregister)))

    def build(self, spark: SparkSession) -> DataFrame:
        """A streaming DataFrame of the source schema.

        Example::

            >>> events = KinesisSources.kinesis("clicks").withInitialPosition("trim_horizon").build(spark)
        """
        if not isinstance(spark, SparkSession):
            raise TypeError(f"spark must be a SparkSession, got {type(spark).__name__}")
        return DataFrame(call(lambda: self._j.build(spark._jsparkSession)), spark)

    def buildBatch(self, spark: SparkSession) -> DataFrame:
        """A batch DataFrame: from the initial position to the tip when the read is planned."""
        if not isinstance(spark, SparkSession):
            raise TypeError(f"spark must be a SparkSession, got {type(spark).__name__}")
        return DataFrame(call(lambda: self._j.buildBatch(spark._jsparkSession)), spark)


class KinesisSinkBuilder(_Builder):
    """Made by :meth:`KinesisSinks.kinesis`."""

    def withMaxRecordsPerRequest(self, records: int) -> KinesisSinkBuilder:
        """Records per PutRecords request (1..500)."""
        check_int("records", records)
        return self._next(call(lambda: self._j.withMaxRecordsPerRequest(records)))

    def withMaxBytesPerRequest(self, bytes: int) -> KinesisSinkBuilder:
        """Bytes per PutRecords request."""
        check_int("bytes", bytes)
        return self._next(call(lambda: self._j.withMaxBytesPerRequest(bytes)))

    def withClusterByPartitionKey(self, cluster: bool) -> KinesisSinkBuilder:
        """Cluster the input by partition key before the write (a shuffle), so one task writes each key."""
        check_bool("cluster", cluster)
        return self._next(call(lambda: self._j.withClusterByPartitionKey(cluster)))

    def withFlowControl(self, mode: str) -> KinesisSinkBuilder:
        """``adaptive`` (the default: each throttling shard paced at its own send rate), ``ladder``, ``aimd`` or ``off``."""
        check_str("mode", mode)
        return self._next(call(lambda: self._j.withFlowControl(mode)))

    def withMaxInFlightRequests(self, requests: int) -> KinesisSinkBuilder:
        """PutRecords requests in flight per task."""
        check_int("requests", requests)
        return self._next(call(lambda: self._j.withMaxInFlightRequests(requests)))

    def withPreserveKeyOrder(self, preserve: bool) -> KinesisSinkBuilder:
        """Keep each key's order even when records are resent (at some throughput cost)."""
        check_bool("preserve", preserve)
        return self._next(call(lambda: self._j.withPreserveKeyOrder(preserve)))

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
            return self._next(call(lambda: self._j.withAggregation()))
        if any(v is None for v in limits):
            raise ValueError("maxBytes, maxRecords and lingerMs go together: give all three or none")
        check_int("maxBytes", maxBytes, minimum=1024)
        check_int("maxRecords", maxRecords)
        check_int("lingerMs", lingerMs)
        return self._next(call(lambda: self._j.withAggregation(maxBytes, maxRecords, lingerMs)))

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
        streaming = DataStreamWriter(df)
        streaming._jwrite = call(lambda: self._j.buildStreaming(df._jdf))
        return streaming

    def buildBatch(self, df: DataFrame) -> DataFrameWriter:
        """``build`` for a batch DataFrame, typed: a ``DataFrameWriter`` in append mode."""
        if not isinstance(df, DataFrame) or df.isStreaming:
            raise TypeError("df must be a batch DataFrame; use buildStreaming for a streaming one")
        batch = DataFrameWriter(df)
        batch._jwrite = call(lambda: self._j.buildBatch(df._jdf))
        return batch


class KinesisSources:
    """Entry point mirroring ``io.github.sparkkinesis.KinesisSources``; needs an active SparkSession."""

    @staticmethod
    def kinesis(streamName: str) -> KinesisSourceBuilder:
        """A source builder for ``streamName`` (comma-separated for several streams)."""
        check_str("streamName", streamName)
        return KinesisSourceBuilder(call(lambda: connector().KinesisSources.kinesis(streamName)))


class KinesisSinks:
    """Entry point mirroring ``io.github.sparkkinesis.KinesisSinks``; needs an active SparkSession."""

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
        if keyColumn is None or valueColumn is None:
            return KinesisSinkBuilder(call(lambda: connector().KinesisSinks.kinesis(streamName)))
        for name, c in (("keyColumn", keyColumn), ("valueColumn", valueColumn)):
            if not isinstance(c, Column):
                raise TypeError(f"{name} must be a pyspark.sql.Column, got {type(c).__name__}")
        return KinesisSinkBuilder(
            call(lambda: connector().KinesisSinks.kinesis(streamName, keyColumn._jc, valueColumn._jc))
        )
