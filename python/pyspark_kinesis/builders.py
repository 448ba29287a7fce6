"""`KinesisSources` and `KinesisSinks`: thin wrappers over the JVM builders of the same names.

On a classic session every method forwards to the JVM builder through py4j, so option names, defaults and
validation exist once, in Scala. On a Spark Connect session (no JVM in this process) each method records the
options it maps to, with the keys of the option table generated from the Scala one (``_options.json``), and
``build`` hands them to ``format("kinesis").options(...)``: the connector checks them on the server. Arguments are
checked and converted here first in both cases (``_args``), so a wrong type fails with a message naming the
argument, and both paths receive the same values.

Builders are immutable: every ``with...`` method returns a new builder and leaves its receiver as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql.readwriter import DataFrameWriter
from pyspark.sql.streaming.readwriter import DataStreamWriter

from pyspark_kinesis import _args, _options
from pyspark_kinesis._args import (
    FLOW_CONTROLS,
    INT_MAX,
    DurationLike,
    FlowControl,
    InitialPosition,
    SizeLike,
    check_bool,
    check_int,
    check_number,
    check_str,
)
from pyspark_kinesis._connect import connect_mode, is_connect_dataframe, is_connect_session, scala_string
from pyspark_kinesis._jvm import call, connector, private
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
        """The AWS region of the stream.

        :param region: a region name such as ``"eu-west-1"``. Default (option ``region``): AWS default region
            chain, else us-east-1.
        :return: a new builder.
        :raises TypeError: ``region`` is not a ``str``.
        :raises ValueError: ``region`` is empty.

        Example::

            >>> KinesisSources.kinesis("clicks").withRegion("eu-west-1").options()
            {'region': 'eu-west-1', 'streamName': 'clicks'}
        """
        check_str("region", region)
        return self._set(lambda j: j.withRegion(region), ("region", region))

    def withEndpoint(self: B, endpoint: str) -> B:
        """A custom Kinesis endpoint: a local emulator, a VPC endpoint, a proxy.

        :param endpoint: an absolute ``http``/``https`` URL (the connector checks its form when ``build`` is
            called). Default (option ``endpoint``): the region's endpoint.
        :return: a new builder.
        :raises TypeError: ``endpoint`` is not a ``str``.
        :raises ValueError: ``endpoint`` is empty.

        Example::

            >>> KinesisSinks.kinesis("copy").withEndpoint("http://127.0.0.1:4566").options()["endpoint"]
            'http://127.0.0.1:4566'
        """
        check_str("endpoint", endpoint)
        return self._set(lambda j: j.withEndpoint(endpoint), ("endpoint", endpoint))

    def withCredentials(self: B, accessKey: str, secretKey: str, sessionToken: str | None = None) -> B:
        """Static AWS credentials instead of the default credential chain. They are secrets: ``repr`` and the
        connector's logs show them as ``***``; :meth:`options` returns them as given.

        :param accessKey: the access key id (option ``awsAccessKey``).
        :param secretKey: the secret key (option ``awsSecretKey``).
        :param sessionToken: the session token of temporary credentials (option ``awsSessionToken``); default none.
        :return: a new builder.
        :raises TypeError: an argument is not a ``str``.
        :raises ValueError: an argument is empty.

        Example::

            >>> KinesisSources.kinesis("clicks").withCredentials("AKIAEXAMPLE", "wJalrEXAMPLEKEY")
            KinesisSourceBuilder({'awsAccessKey': '***', 'awsSecretKey': '***', 'streamName': 'clicks'})
        """
        check_str("accessKey", accessKey)
        check_str("secretKey", secretKey)
        if sessionToken is None:
            return self._set(
                lambda j: j.withCredentials(accessKey, secretKey),
                ("awsAccessKey", accessKey),
                ("awsSecretKey", secretKey),
            )
        check_str("sessionToken", sessionToken)
        return self._set(
            lambda j: j.withCredentials(accessKey, secretKey, sessionToken),
            ("awsAccessKey", accessKey),
            ("awsSecretKey", secretKey),
            ("awsSessionToken", sessionToken),
        )

    def withProfile(self: B, profile: str) -> B:
        """Credentials of a named profile of the AWS config files (``~/.aws/credentials``, ``~/.aws/config``).

        :param profile: the profile's name (option ``awsProfile``); default: the default credential chain.
        :return: a new builder.
        :raises TypeError: ``profile`` is not a ``str``.
        :raises ValueError: ``profile`` is empty.

        Example::

            >>> KinesisSources.kinesis("clicks").withProfile("analytics").options()["awsProfile"]
            'analytics'
        """
        check_str("profile", profile)
        return self._set(lambda j: j.withProfile(profile), ("awsProfile", profile))

    def withRoleArn(self: B, roleArn: str, externalId: str | None = None) -> B:
        """Assume an IAM role with STS (a stream of another account), on top of the base credentials.

        :param roleArn: the role's ARN (option ``roleArn``).
        :param externalId: the external id the role's trust policy asks for (option ``roleExternalId``, a secret);
            default none.
        :return: a new builder.
        :raises TypeError: an argument is not a ``str``.
        :raises ValueError: an argument is empty.

        Example::

            >>> KinesisSources.kinesis("clicks").withRoleArn("arn:aws:iam::123456789012:role/reader").options()
            {'roleArn': 'arn:aws:iam::123456789012:role/reader', 'streamName': 'clicks'}
        """
        check_str("roleArn", roleArn)
        if externalId is None:
            return self._set(lambda j: j.withRoleArn(roleArn), ("roleArn", roleArn))
        check_str("externalId", externalId)
        return self._set(
            lambda j: j.withRoleArn(roleArn, externalId), ("roleArn", roleArn), ("roleExternalId", externalId)
        )

    def withProxy(self: B, host: str, port: int, username: str | None = None, password: str | None = None) -> B:
        """Every call (reads, writes, STS) through an HTTP proxy, with Basic authentication when it asks for it.
        Without this, each JVM's own proxy properties (``https.proxyHost``, ...) apply. The password is a secret:
        ``repr`` and the connector's logs show it as ``***``; :meth:`options` returns it as given.

        :param host: the proxy's host name or IP address, without scheme or port (option ``proxyHost``).
        :param port: the proxy's port, 1..65535 (option ``proxyPort``).
        :param username: the proxy user (option ``proxyUsername``); default none.
        :param password: that user's password (option ``proxyPassword``); given with ``username``.
        :return: a new builder.
        :raises TypeError: an argument has the wrong type.
        :raises ValueError: ``host`` is empty, ``port`` is outside 1..65535, or only one of ``username`` and
            ``password`` is given.

        Example::

            >>> builder = KinesisSources.kinesis("clicks").withProxy("proxy.example.com", 3128, "svc", "s3cr3t")
            >>> builder.options()["proxyPort"], "s3cr3t" in repr(builder)
            ('3128', False)
        """
        check_str("host", host)
        check_int("port", port, 1, 65535)
        if username is None and password is None:
            return self._set(lambda j: j.withProxy(host, port), ("proxyHost", host), ("proxyPort", port))
        if username is None or password is None:
            given, missing = ("username", "password") if password is None else ("password", "username")
            raise ValueError(
                f"{missing} must be given with {given}: both, or neither for a proxy without authentication"
            )
        check_str("username", username)
        check_str("password", password)
        return self._set(
            lambda j: j.withProxy(host, port, username, password),
            ("proxyHost", host),
            ("proxyPort", port),
            ("proxyUsername", username),
            ("proxyPassword", password),
        )

    def withNonProxyHosts(self: B, hosts: str | Sequence[str]) -> B:
        """Hosts called directly rather than through the proxy (a VPC endpoint, say).

        :param hosts: host names or IP addresses, ``*`` standing for any characters (``"*.internal"``, ``"10.*"``):
            a list, or one string separated by ``,`` or ``|`` (option ``nonProxyHosts``). Default: none with
            :meth:`withProxy`, else the JVM's ``http.nonProxyHosts``.
        :return: a new builder.
        :raises TypeError: ``hosts`` is not a ``str`` or a sequence of them.
        :raises ValueError: ``hosts`` (or one of them) is empty.

        Example::

            >>> KinesisSinks.kinesis("copy").withNonProxyHosts(["*.vpce.amazonaws.com", "10.*"]).options()
            {'nonProxyHosts': '*.vpce.amazonaws.com,10.*', 'streamName': 'copy'}
        """
        name = "hosts"
        if isinstance(hosts, str):
            joined = check_str(name, hosts)
        elif isinstance(hosts, Sequence):
            if not hosts:
                raise ValueError(f"{name} must name at least one host")
            joined = ",".join(check_str(f"{name}[{i}]", h) for i, h in enumerate(hosts))
        else:
            raise TypeError(f"{name} must be a str or a list of str, got {type(hosts).__name__}")
        return self._set(lambda j: j.withNonProxyHosts(joined), ("nonProxyHosts", joined))

    def withRetryStrategy(self: B, strategy: RetryStrategy) -> B:
        """How retryable failures (throttling, 5xx, network errors, timeouts) are retried: sets the three options
        of ``strategy.options()``.

        :param strategy: made by :class:`RetryStrategies`. Default: :meth:`RetryStrategies.defaultStrategy`.
        :return: a new builder.
        :raises TypeError: ``strategy`` is not a :class:`RetryStrategy`.

        Example::

            >>> strategy = RetryStrategies.exponential(100, 2000, maxAttempts=5)
            >>> KinesisSinks.kinesis("copy").withRetryStrategy(strategy).options()["retryMaxAttempts"]
            '5'
        """
        if not isinstance(strategy, RetryStrategy):
            raise TypeError(f"strategy must be a RetryStrategy (from RetryStrategies), got {type(strategy).__name__}")
        if self._settings is None and strategy._j is not None:
            return self._next(call(lambda: self._j.withRetryStrategy(strategy._j)))
        builder = self
        for key, value in strategy.options().items():
            builder = builder.withOption(key, value)
        return builder

    def withOption(self: B, key: str, value: str) -> B:
        """Any option of the connector's table, by key, as ``DataStreamReader.option`` takes it: the way to set the
        options no method covers (``streamARN``, ``apiCallTimeout``, ...). The value is not checked here; the
        connector checks it when ``build`` is called. Keys are case-insensitive: a later setting replaces an
        earlier one in any case.

        :param key: an option key, e.g. ``"apiCallTimeout"`` (all of them: docs/configuration.md).
        :param value: the option's value, as a string.
        :return: a new builder.
        :raises TypeError: ``key`` or ``value`` is not a ``str``.
        :raises ValueError: ``key`` is empty.

        Example::

            >>> KinesisSources.kinesis("clicks").withOption("apiCallTimeout", "30s").options()
            {'apiCallTimeout': '30s', 'streamName': 'clicks'}
        """
        check_str("key", key)
        if not isinstance(value, str):
            raise TypeError(f"value must be a str, got {type(value).__name__}")
        if self._settings is None:
            return self._next(call(lambda: self._j.withOption(key, value)))
        return self._copy(None, _put(self._settings, key, value))

    def options(self) -> dict[str, str]:
        """The exact options ``build`` applies, sorted by key; secrets as given.

        :return: option key to value.

        Example::

            >>> KinesisSources.kinesis("clicks").withRegion("eu-west-1").withShardsPerTask(2).options()
            {'region': 'eu-west-1', 'shardsPerTask': '2', 'streamName': 'clicks'}
        """
        if self._settings is not None:
            return dict(sorted(self._settings.items()))
        return {str(k): str(v) for k, v in dict(call(lambda: self._j.options())).items()}

    def __repr__(self) -> str:
        """The builder's class and options, every secret as ``***``."""
        return f"{type(self).__name__}({_options.redact(self.options())})"


class KinesisSourceBuilder(_Builder):
    """Configures a read of Kinesis streams; made by :meth:`KinesisSources.kinesis`. Every ``with...`` method
    returns a new builder; :meth:`build` (or :meth:`buildStreaming`) makes the streaming DataFrame,
    :meth:`buildBatch` a batch one.

    Example::

        >>> source = KinesisSources.kinesis("clicks").withRegion("eu-west-1").withInitialPosition("trim_horizon")
        >>> source.build(spark).isStreaming
        True
    """

    def withInitialPosition(self, position: InitialPosition | str | Mapping[str, Any]) -> KinesisSourceBuilder:
        """Where a new query starts reading (a query restarted from its checkpoint goes on from there instead).

        :param position: ``"latest"`` (records written after the query starts), ``"trim_horizon"`` or
            ``"earliest"`` (the oldest record kept), ``"at_timestamp"`` (with the option ``initialTimestamp``:
            prefer :meth:`withInitialTimestamp`), in any case; or a JSON object, as a string or a mapping:
            Databricks' ``{"at_timestamp": "<time>", "format": "<DateTimeFormatter pattern>"}`` or per-shard
            positions. Default (option ``initialPosition``): latest; trim_horizon for :meth:`buildBatch`.
        :return: a new builder.
        :raises TypeError: ``position`` is neither a ``str`` nor a mapping, or the mapping is not JSON.
        :raises ValueError: ``position`` is another name.

        Example::

            >>> KinesisSources.kinesis("clicks").withInitialPosition("TRIM_HORIZON").options()["initialPosition"]
            'trim_horizon'
            >>> shards = {"shardId-000000000000": {"after_sequence_number": "4959033827149025660855"}}
            >>> KinesisSources.kinesis("clicks").withInitialPosition(shards).options()["initialPosition"]
            '{"shardId-000000000000": {"after_sequence_number": "4959033827149025660855"}}'
        """
        value = _args.initial_position("position", position)
        return self._set(lambda j: j.withInitialPosition(value), ("initialPosition", value))

    def withInitialTimestamp(self, timestamp: datetime | int) -> KinesisSourceBuilder:
        """Start at the records that arrived at or after ``timestamp`` (sets ``initialPosition`` to
        ``at_timestamp`` and ``initialTimestamp``).

        :param timestamp: a timezone-aware ``datetime`` (a naive one is refused: whether it means UTC or local time
            is ambiguous; use ``datetime.now(timezone.utc)``, or ``.astimezone()`` for local time), or an ``int`` of
            milliseconds since the epoch, at least 0. Sub-millisecond parts are dropped.
        :return: a new builder.
        :raises TypeError: ``timestamp`` is neither a ``datetime`` nor an ``int``.
        :raises ValueError: ``timestamp`` is naive, or before 1970.

        Example::

            >>> start = datetime(2025, 1, 31, 12, 0, tzinfo=timezone.utc)
            >>> KinesisSources.kinesis("clicks").withInitialTimestamp(start).options()
            {'initialPosition': 'at_timestamp', 'initialTimestamp': '1738324800000', 'streamName': 'clicks'}
            >>> KinesisSources.kinesis("clicks").withInitialTimestamp(1738324800000).options()["initialTimestamp"]
            '1738324800000'
        """
        millis = _args.epoch_millis("timestamp", timestamp)
        return self._set(
            lambda j: j.withInitialTimestamp(millis), ("initialPosition", "at_timestamp"), ("initialTimestamp", millis)
        )

    def withMaxRecordsPerTrigger(self, records: int) -> KinesisSourceBuilder:
        """Admission control: at most ``records`` per micro-batch, over all shards, shared in proportion to what
        each shard has ready.

        :param records: at least 1. Default (option ``maxRecordsPerTrigger``): none.
        :return: a new builder.
        :raises TypeError: ``records`` is not an ``int``.
        :raises ValueError: ``records`` is below 1.

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxRecordsPerTrigger(100_000).options()["maxRecordsPerTrigger"]
            '100000'
        """
        check_int("records", records)
        return self._set(lambda j: j.withMaxRecordsPerTrigger(records), ("maxRecordsPerTrigger", records))

    def withMaxRecordsPerShardPerTrigger(self, records: int) -> KinesisSourceBuilder:
        """Admission control: at most ``records`` of any one shard per micro-batch (the AWS Labs and Qubole
        connectors' ``maxFetchRecordsPerShard``). With ``withMaxRecordsPerTrigger`` too, what this cap leaves of a
        shard's share goes to the other shards.

        :param records: at least 1. Default (option ``maxRecordsPerShardPerTrigger``): none.
        :return: a new builder.
        :raises TypeError: ``records`` is not an ``int``.
        :raises ValueError: ``records`` is below 1.

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxRecordsPerShardPerTrigger(10_000).options()["maxRecordsPerShardPerTrigger"]
            '10000'
        """
        check_int("records", records)
        return self._set(
            lambda j: j.withMaxRecordsPerShardPerTrigger(records), ("maxRecordsPerShardPerTrigger", records)
        )

    def withMinRecordsPerTrigger(self, records: int) -> KinesisSourceBuilder:
        """Admission control: a micro-batch waits until at least ``records`` are ready over all shards, or until
        ``maxTriggerDelay`` has passed since the last batch (Kafka's ``minOffsetsPerTrigger``). Fewer, larger batches
        on a low-volume stream; ``Trigger.AvailableNow`` ignores it; refused in real-time mode.

        :param records: at least 1, at most ``maxRecordsPerTrigger`` when that is set (the connector checks it when
            ``build`` is called). Default (option ``minRecordsPerTrigger``): none.
        :return: a new builder.
        :raises TypeError: ``records`` is not an ``int``.
        :raises ValueError: ``records`` is below 1.

        Example::

            >>> KinesisSources.kinesis("clicks").withMinRecordsPerTrigger(10_000).options()["minRecordsPerTrigger"]
            '10000'
        """
        check_int("records", records)
        return self._set(lambda j: j.withMinRecordsPerTrigger(records), ("minRecordsPerTrigger", records))

    def withMaxTriggerDelay(self, delay: DurationLike) -> KinesisSourceBuilder:
        """With ``withMinRecordsPerTrigger``: the longest a batch is held back for want of records, counted from the
        last batch of this run (a restarted query does not wait).

        :param delay: at least 1 ms (checked by the connector when ``build`` is called): a duration string such as
            ``"30s"`` or ``"15m"``, an ``int`` of milliseconds or a ``datetime.timedelta``. Default (option
            ``maxTriggerDelay``): 15m.
        :return: a new builder.
        :raises TypeError: ``delay`` is not a ``str``, ``int`` or ``timedelta``.
        :raises ValueError: ``delay`` is negative, not whole milliseconds, or a malformed string.

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxTriggerDelay("30s").options()["maxTriggerDelay"]
            '30s'
        """
        value = _args.duration("delay", delay)
        return self._set(lambda j: j.withMaxTriggerDelay(value), ("maxTriggerDelay", value))

    def withMaxRecordsPerFetch(self, records: int) -> KinesisSourceBuilder:
        """The ``Limit`` of one GetRecords call.

        :param records: 1..10000 (the connector checks the upper bound when ``build`` is called). Default (option
            ``maxRecordsPerFetch``): 10000.
        :return: a new builder.
        :raises TypeError: ``records`` is not an ``int``.
        :raises ValueError: ``records`` is below 1 (here) or above 10000 (at ``build``, the connector's message).

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxRecordsPerFetch(500).options()["maxRecordsPerFetch"]
            '500'
        """
        check_int("records", records, maximum=INT_MAX)
        return self._set(lambda j: j.withMaxRecordsPerFetch(records), ("maxRecordsPerFetch", records))

    def withMaxBytesPerTrigger(self, maxBytes: SizeLike) -> KinesisSourceBuilder:
        """Admission control: at most ``maxBytes`` of record data per micro-batch, over all shards (Spark 4 only:
        on Spark 3.5 the connector refuses the option).

        :param maxBytes: at least 1 byte: an ``int``, or a size string such as ``"64m"`` (binary units), which is
            converted to bytes here. Default (option ``maxBytesPerTrigger``): none.
        :return: a new builder.
        :raises TypeError: ``maxBytes`` is neither an ``int`` nor a ``str``.
        :raises ValueError: ``maxBytes`` is below 1 or a malformed size.

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxBytesPerTrigger("64m").options()["maxBytesPerTrigger"]
            '67108864'
        """
        size = _args.size_bytes("maxBytes", maxBytes)
        return self._set(lambda j: j.withMaxBytesPerTrigger(size), ("maxBytesPerTrigger", size))

    def withMaxFetchRate(self, megabytesPerSecond: float) -> KinesisSourceBuilder:
        """A hard cap on the read rate of each shard.

        :param megabytesPerSecond: MB/s per shard, above 0 and at most 2 (the shard's read quota; the connector
            checks the range when ``build`` is called). Default (option ``maxFetchRate``): adaptive (the shard's
            read quota; throttling backs off).
        :return: a new builder.
        :raises TypeError: ``megabytesPerSecond`` is not a number.

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxFetchRate(1.5).options()["maxFetchRate"]
            '1.5'
        """
        rate = check_number("megabytesPerSecond", megabytesPerSecond)
        return self._set(lambda j: j.withMaxFetchRate(rate), ("maxFetchRate", rate))

    def withMinFetchPeriod(self, period: DurationLike) -> KinesisSourceBuilder:
        """The least time between two GetRecords calls on one shard.

        :param period: at least 200 ms (Kinesis' limit of 5 calls per second per shard; the connector checks it
            when ``build`` is called): a duration string such as ``"250ms"``, an ``int`` of milliseconds or a
            ``datetime.timedelta``. Default (option ``minFetchPeriod``): 200ms.
        :return: a new builder.
        :raises TypeError: ``period`` is not a ``str``, ``int`` or ``timedelta``.
        :raises ValueError: ``period`` is negative, not whole milliseconds, or a malformed string.

        Example::

            >>> source = KinesisSources.kinesis("clicks").withMinFetchPeriod(timedelta(milliseconds=500))
            >>> source.options()["minFetchPeriod"]
            '500ms'
        """
        value = _args.duration("period", period)
        return self._set(lambda j: j.withMinFetchPeriod(value), ("minFetchPeriod", value))

    def withMaxFetchDuration(self, duration: DurationLike) -> KinesisSourceBuilder:
        """The longest a snapshot waits for its shards (their first answer, or data on an idle stream) before a
        batch is planned.

        :param duration: at least 100 ms (checked by the connector when ``build`` is called): a duration string
            such as ``"5s"``, an ``int`` of milliseconds or a ``datetime.timedelta``. Default (option
            ``maxFetchDuration``): 10s.
        :return: a new builder.
        :raises TypeError: ``duration`` is not a ``str``, ``int`` or ``timedelta``.
        :raises ValueError: ``duration`` is negative, not whole milliseconds, or a malformed string.

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxFetchDuration("5s").options()["maxFetchDuration"]
            '5s'
        """
        value = _args.duration("duration", duration)
        return self._set(lambda j: j.withMaxFetchDuration(value), ("maxFetchDuration", value))

    def withShardFetchInterval(self, interval: DurationLike) -> KinesisSourceBuilder:
        """How often the shards are listed, to discover resharding.

        :param interval: at least 100 ms (checked by the connector when ``build`` is called): a duration string
            such as ``"5s"``, an ``int`` of milliseconds or a ``datetime.timedelta``. Default (option
            ``shardFetchInterval``): 1s.
        :return: a new builder.
        :raises TypeError: ``interval`` is not a ``str``, ``int`` or ``timedelta``.
        :raises ValueError: ``interval`` is negative, not whole milliseconds, or a malformed string.

        Example::

            >>> source = KinesisSources.kinesis("clicks").withShardFetchInterval(timedelta(seconds=5))
            >>> source.options()["shardFetchInterval"]
            '5000ms'
        """
        value = _args.duration("interval", interval)
        return self._set(lambda j: j.withShardFetchInterval(value), ("shardFetchInterval", value))

    def withShardsPerTask(self, shards: int) -> KinesisSourceBuilder:
        """How many shards one Spark task reads.

        :param shards: 1..10000 (the connector checks the upper bound when ``build`` is called). Default (option
            ``shardsPerTask``): auto (no more tasks than Spark's default parallelism).
        :return: a new builder.
        :raises TypeError: ``shards`` is not an ``int``.
        :raises ValueError: ``shards`` is below 1.

        Example::

            >>> KinesisSources.kinesis("clicks").withShardsPerTask(4).options()["shardsPerTask"]
            '4'
        """
        check_int("shards", shards, maximum=INT_MAX)
        return self._set(lambda j: j.withShardsPerTask(shards), ("shardsPerTask", shards))

    def withFailOnDataLoss(self, fail: bool) -> KinesisSourceBuilder:
        """Whether to fail, or warn and go on with what is left, when records the query has not read can no longer
        be read (expired past the stream's retention, stream deleted and recreated).

        :param fail: ``True`` to fail the query. Default (option ``failOnDataLoss``): true.
        :return: a new builder.
        :raises TypeError: ``fail`` is not a ``bool``.

        Example::

            >>> KinesisSources.kinesis("clicks").withFailOnDataLoss(False).options()["failOnDataLoss"]
            'false'
        """
        check_bool("fail", fail)
        return self._set(lambda j: j.withFailOnDataLoss(fail), ("failOnDataLoss", fail))

    def withFetchBufferSize(self, size: SizeLike) -> KinesisSourceBuilder:
        """Bytes of prefetched records one executor may hold (all shards, all queries); prefetching pauses when it
        is full.

        :param size: at least 1 MiB (checked by the connector when ``build`` is called): an ``int`` of bytes or a
            size string such as ``"256m"`` (binary units). Default (option ``fetchBufferSize``): auto (1/8 of the
            executor heap).
        :return: a new builder.
        :raises TypeError: ``size`` is neither an ``int`` nor a ``str``.
        :raises ValueError: ``size`` is below 1 byte or a malformed size.

        Example::

            >>> KinesisSources.kinesis("clicks").withFetchBufferSize("256m").options()["fetchBufferSize"]
            '256m'
        """
        value = _args.size("size", size)
        return self._set(lambda j: j.withFetchBufferSize(value), ("fetchBufferSize", value))

    def withMaxIdlePollInterval(self, interval: DurationLike) -> KinesisSourceBuilder:
        """The longest an idle shard goes unpolled: a silent shard is polled less and less often, up to this.
        Shorter means lower latency for the first record after a silence, and more calls.

        :param interval: at least 200 ms (checked by the connector when ``build`` is called): a duration string
            such as ``"1s"``, an ``int`` of milliseconds or a ``datetime.timedelta``. Default (option
            ``maxIdlePollInterval``): 10s (in real-time mode: the ``minFetchPeriod``).
        :return: a new builder.
        :raises TypeError: ``interval`` is not a ``str``, ``int`` or ``timedelta``.
        :raises ValueError: ``interval`` is negative, not whole milliseconds, or a malformed string.

        Example::

            >>> KinesisSources.kinesis("clicks").withMaxIdlePollInterval("1s").options()["maxIdlePollInterval"]
            '1s'
        """
        value = _args.duration("interval", interval)
        return self._set(lambda j: j.withMaxIdlePollInterval(value), ("maxIdlePollInterval", value))

    def withEnhancedFanOut(self, consumerName: str | None = None) -> KinesisSourceBuilder:
        """Read with enhanced fan-out (``consumerMode=efo``): each shard pushes up to 2 MiB/s to this query alone,
        instead of sharing its 2 MiB/s with every polling reader. Streaming queries only: batch reads poll.

        :param consumerName: the consumer registered on each stream read (reused when it exists, registered when
            missing). Default (option ``consumerName``): consumerNamePrefix + the query id.
        :return: a new builder.
        :raises TypeError: ``consumerName`` is not a ``str``.
        :raises ValueError: ``consumerName`` is empty.

        Example::

            >>> KinesisSources.kinesis("clicks").withEnhancedFanOut("clicks-app").options()
            {'consumerMode': 'efo', 'consumerName': 'clicks-app', 'streamName': 'clicks'}
        """
        if consumerName is None:
            return self._set(lambda j: j.withEnhancedFanOut(), ("consumerMode", "efo"))
        check_str("consumerName", consumerName)
        return self._set(
            lambda j: j.withEnhancedFanOut(consumerName), ("consumerMode", "efo"), ("consumerName", consumerName)
        )

    def withRequireConsumerDeregistration(self, deregister: bool) -> KinesisSourceBuilder:
        """Whether the enhanced fan-out consumer the query registered is deregistered when the query stops (kept,
        it serves the query's restarts).

        :param deregister: ``True`` to deregister. Default (option ``requireConsumerDeregistration``): false.
        :return: a new builder.
        :raises TypeError: ``deregister`` is not a ``bool``.

        Example::

            >>> source = KinesisSources.kinesis("clicks").withEnhancedFanOut().withRequireConsumerDeregistration(True)
            >>> source.options()["requireConsumerDeregistration"]
            'true'
        """
        check_bool("deregister", deregister)
        return self._set(
            lambda j: j.withRequireConsumerDeregistration(deregister), ("requireConsumerDeregistration", deregister)
        )

    def build(self, spark: SparkSession) -> DataFrame:
        """A streaming DataFrame of the source schema (``spark.readStream.format("kinesis")`` with these options).
        The connector checks every option now, before any query starts; nothing is read until a query starts.

        :param spark: the session (classic or Spark Connect).
        :return: a streaming ``DataFrame``: ``partitionKey``, ``data``, ``stream``, ``shardId``,
            ``sequenceNumber``, ``approximateArrivalTimestamp``, ``subSequenceNumber``.
        :raises TypeError: ``spark`` is not a SparkSession.
        :raises ValueError: an option value is invalid (the connector's message, naming the option).

        Example::

            >>> events = KinesisSources.kinesis("clicks").withRegion("eu-west-1").build(spark)
            >>> events.isStreaming, events.columns[:2]
            (True, ['partitionKey', 'data'])
        """
        _check_session(spark)
        if self._settings is not None or is_connect_session(spark):
            return self._validated(lambda: spark.readStream.format(FORMAT).options(**self.options()).load())
        jsession = private(spark, "_jsparkSession", "hand the session to the connector's JVM builder")
        return DataFrame(call(lambda: self._j.build(jsession)), spark)

    def buildStreaming(self, spark: SparkSession) -> DataFrame:
        """:meth:`build`, named as the sink builder's typed variant: a streaming DataFrame of the source schema.

        :param spark: the session (classic or Spark Connect).
        :return: a streaming ``DataFrame``.
        :raises TypeError: ``spark`` is not a SparkSession.
        :raises ValueError: an option value is invalid (the connector's message, naming the option).

        Example::

            >>> KinesisSources.kinesis("clicks").withRegion("eu-west-1").buildStreaming(spark).isStreaming
            True
        """
        return self.build(spark)

    def buildBatch(self, spark: SparkSession) -> DataFrame:
        """A batch DataFrame of the source schema: the records from the initial position up to the tip of each
        shard when the read is planned (``spark.read.format("kinesis")`` with these options).

        :param spark: the session (classic or Spark Connect).
        :return: a batch ``DataFrame``; nothing is read until an action runs.
        :raises TypeError: ``spark`` is not a SparkSession.
        :raises ValueError: an option value is invalid (the connector's message, naming the option).

        Example::

            >>> KinesisSources.kinesis("clicks").withInitialPosition("trim_horizon").buildBatch(spark).isStreaming
            False
        """
        _check_session(spark)
        if self._settings is not None or is_connect_session(spark):
            return self._validated(lambda: spark.read.format(FORMAT).options(**self.options()).load())
        jsession = private(spark, "_jsparkSession", "hand the session to the connector's JVM builder")
        return DataFrame(call(lambda: self._j.buildBatch(jsession)), spark)

    @staticmethod
    def _validated(load: Callable[[], DataFrame]) -> DataFrame:
        """Spark Connect: ``load()`` only describes the read; asking for the schema has the server resolve it, where
        the connector checks the options (the JVM builder's checks), so a bad value fails here, as ValueError. (On a
        classic session ``load()`` itself checks.)"""
        df = call(load)
        call(lambda: df.schema)
        return df


class KinesisSinkBuilder(_Builder):
    """Configures a write to a Kinesis stream; made by :meth:`KinesisSinks.kinesis`. Every ``with...`` method
    returns a new builder; :meth:`build` makes the writer of a DataFrame (:meth:`buildStreaming` and
    :meth:`buildBatch` are its typed variants).

    Example::

        >>> events = KinesisSources.kinesis("clicks").withRegion("eu-west-1").build(spark)
        >>> writer = KinesisSinks.kinesis("copy").withRegion("eu-west-1").build(events)
        >>> type(writer).__name__
        'DataStreamWriter'
    """

    def __init__(
        self, jbuilder: Any, settings: dict[str, str] | None = None, columns: tuple[Column, Column] | None = None
    ) -> None:
        super().__init__(jbuilder, settings)
        self._columns = columns

    def _input(self, df: DataFrame) -> DataFrame:
        """What the JVM builder writes: the generic form's key (as a string) and data columns, else ``df``."""
        if self._columns is None:
            return df
        key, value = self._columns
        return df.select(key.cast("string").alias(PARTITION_KEY_COLUMN), value.alias(DATA_COLUMN))

    def _check_with_jvm(self, df: DataFrame, streaming: bool) -> None:
        """Classic session: the JVM builder checks the options and the input columns now, before any write starts.
        Its writer is dropped: PySpark has no public way to wrap a JVM writer (only its private ``_jwrite``), so
        the writer returned is made with PySpark's public API from the same input and options, as on Connect."""
        if self._settings is not None or is_connect_dataframe(df):
            return  # Spark Connect: the server checks when the write starts
        jdf = private(df, "_jdf", "hand the DataFrame to the connector's JVM builder")
        call(lambda: self._j.buildStreaming(jdf) if streaming else self._j.buildBatch(jdf))

    def withMaxRecordsPerRequest(self, records: int) -> KinesisSinkBuilder:
        """Records per PutRecords request.

        :param records: 1..500 (the API's limit; the connector checks the upper bound when ``build`` is called).
            Default (option ``maxRecordsPerRequest``): 500.
        :return: a new builder.
        :raises TypeError: ``records`` is not an ``int``.
        :raises ValueError: ``records`` is below 1.

        Example::

            >>> KinesisSinks.kinesis("copy").withMaxRecordsPerRequest(100).options()["maxRecordsPerRequest"]
            '100'
        """
        check_int("records", records, maximum=INT_MAX)
        return self._set(lambda j: j.withMaxRecordsPerRequest(records), ("maxRecordsPerRequest", records))

    def withMaxBytesPerRequest(self, maxBytes: SizeLike) -> KinesisSinkBuilder:
        """Bytes per PutRecords request.

        :param maxBytes: 1 KiB..10 MiB (the connector checks the range when ``build`` is called): an ``int``, or a
            size string such as ``"5m"`` (binary units), which is converted to bytes here. Default (option
            ``maxBytesPerRequest``): 10MiB.
        :return: a new builder.
        :raises TypeError: ``maxBytes`` is neither an ``int`` nor a ``str``.
        :raises ValueError: ``maxBytes`` is below 1 or a malformed size.

        Example::

            >>> KinesisSinks.kinesis("copy").withMaxBytesPerRequest("5m").options()["maxBytesPerRequest"]
            '5242880'
        """
        size = _args.size_bytes("maxBytes", maxBytes)
        return self._set(lambda j: j.withMaxBytesPerRequest(size), ("maxBytesPerRequest", size))

    def withClusterByPartitionKey(self, cluster: bool) -> KinesisSinkBuilder:
        """Shuffle the input so that all records of one partition key are written by one task.

        :param cluster: ``True`` to shuffle. Default (option ``clusterByPartitionKey``): false.
        :return: a new builder.
        :raises TypeError: ``cluster`` is not a ``bool``.

        Example::

            >>> KinesisSinks.kinesis("copy").withClusterByPartitionKey(True).options()["clusterByPartitionKey"]
            'true'
        """
        check_bool("cluster", cluster)
        return self._set(lambda j: j.withClusterByPartitionKey(cluster), ("clusterByPartitionKey", cluster))

    def withFlowControl(self, mode: FlowControl) -> KinesisSinkBuilder:
        """How the sink adapts its send rate to throttling.

        :param mode: ``"adaptive"`` (each throttling shard paced at its own send rate), ``"ladder"``, ``"aimd"`` or
            ``"off"``, in any case. Default (option ``flowControl``): adaptive.
        :return: a new builder.
        :raises TypeError: ``mode`` is not a ``str``.
        :raises ValueError: ``mode`` is another value.

        Example::

            >>> KinesisSinks.kinesis("copy").withFlowControl("aimd").options()["flowControl"]
            'aimd'
        """
        value = _args.choice("mode", mode, FLOW_CONTROLS)
        return self._set(lambda j: j.withFlowControl(value), ("flowControl", value))

    def withMaxInFlightRequests(self, requests: int) -> KinesisSinkBuilder:
        """PutRecords requests one writer task keeps in flight per stream (all records of one partition key share
        one).

        :param requests: 1..64 (the connector checks the upper bound when ``build`` is called). Default (option
            ``maxInFlightRequests``): 4.
        :return: a new builder.
        :raises TypeError: ``requests`` is not an ``int``.
        :raises ValueError: ``requests`` is below 1.

        Example::

            >>> KinesisSinks.kinesis("copy").withMaxInFlightRequests(8).options()["maxInFlightRequests"]
            '8'
        """
        check_int("requests", requests, maximum=INT_MAX)
        return self._set(lambda j: j.withMaxInFlightRequests(requests), ("maxInFlightRequests", requests))

    def withPreserveKeyOrder(self, preserve: bool) -> KinesisSinkBuilder:
        """Never let a resent record land after a later record of its key: at most one record per key per request
        (slower for hot keys).

        :param preserve: ``True`` to keep each key's order through retries. Default (option ``preserveKeyOrder``):
            false.
        :return: a new builder.
        :raises TypeError: ``preserve`` is not a ``bool``.

        Example::

            >>> KinesisSinks.kinesis("copy").withPreserveKeyOrder(True).options()["preserveKeyOrder"]
            'true'
        """
        check_bool("preserve", preserve)
        return self._set(lambda j: j.withPreserveKeyOrder(preserve), ("preserveKeyOrder", preserve))

    def withAggregation(
        self, *, maxBytes: SizeLike | None = None, maxRecords: int | None = None, lingerMs: DurationLike | None = None
    ) -> KinesisSinkBuilder:
        """KPL aggregation (``aggregation=kpl``): user records are packed per shard into KPL aggregates, so many
        small records fill a shard's byte quota instead of its 1000 records/s. Readers must de-aggregate: this
        connector's source, the KCL, ``aws-kinesis-agg``. Default (option ``aggregation``): none.

        The limits are keyword-only; each one not given keeps its default.

        :param maxBytes: the largest aggregate, partition key included: 1 KiB up to ``maxBytesPerRequest`` (the
            connector checks the upper bound when ``build`` is called); an ``int`` or a size string such as
            ``"64k"``. Default (option ``aggregationMaxBytes``): 50KiB.
        :param maxRecords: the most user records in one aggregate, 1..1000000. Default (option
            ``aggregationMaxRecords``): 10000.
        :param lingerMs: the longest a user record waits for company before its aggregate is sent, 1 ms..60 s: an
            ``int`` of milliseconds, a ``datetime.timedelta`` or a duration string. Default (option
            ``aggregationLingerMs``): 100.
        :return: a new builder.
        :raises TypeError: a limit has the wrong type, or is given positionally.
        :raises ValueError: ``maxBytes`` is below 1024, ``maxRecords`` or ``lingerMs`` below 1, or a string is
            malformed (the upper bounds: at ``build``, the connector's message).

        Example::

            >>> KinesisSinks.kinesis("copy").withAggregation().options()
            {'aggregation': 'kpl', 'streamName': 'copy'}
            >>> sink = KinesisSinks.kinesis("copy").withAggregation(maxBytes="64k", lingerMs=timedelta(milliseconds=50))
            >>> sink.options()
            {'aggregation': 'kpl', 'aggregationLingerMs': '50', 'aggregationMaxBytes': '65536', 'streamName': 'copy'}
        """
        size = None if maxBytes is None else _args.size_bytes("maxBytes", maxBytes, minimum=1024)
        records = None if maxRecords is None else check_int("maxRecords", maxRecords, maximum=INT_MAX)
        linger = None if lingerMs is None else _args.duration_millis("lingerMs", lingerMs, maximum=INT_MAX)
        if size is not None and records is not None and linger is not None:
            return self._set(
                lambda j: j.withAggregation(size, records, linger),
                ("aggregation", "kpl"),
                ("aggregationMaxBytes", size),
                ("aggregationMaxRecords", records),
                ("aggregationLingerMs", linger),
            )
        builder = self._set(lambda j: j.withAggregation(), ("aggregation", "kpl"))
        for name, limit in (
            ("aggregationMaxBytes", size),
            ("aggregationMaxRecords", records),
            ("aggregationLingerMs", linger),
        ):
            if limit is not None:
                builder = builder.withOption(_options.key(name), str(limit))
        return builder

    def build(self, df: DataFrame) -> DataStreamWriter | DataFrameWriter:
        """The writer of ``df`` to the stream: a configured ``DataStreamWriter`` for a streaming DataFrame, a
        ``DataFrameWriter`` in append mode for a batch one. The options and the input columns are checked now,
        before any write starts; add the query's own settings (``checkpointLocation``, ``trigger``) to the writer.

        :param df: has the columns ``data`` (string or binary) and ``partitionKey`` (optionally
            ``explicitHashKey``), or any columns when the builder was made with a key and a value column.
        :return: ``df.writeStream`` or ``df.write``, configured.
        :raises TypeError: ``df`` is not a DataFrame.
        :raises ValueError: an option value is invalid or an input column is missing (the connector's message; on
            Spark Connect the server checks when the write or the query starts, and raises PySpark's
            ``IllegalArgumentException``).

        Example::

            >>> events = KinesisSources.kinesis("clicks").withRegion("eu-west-1").build(spark)
            >>> writer = KinesisSinks.kinesis("copy").withRegion("eu-west-1").build(events)
            >>> writer = writer.option("checkpointLocation", "/tmp/checkpoints/copy")  # then writer.start()
        """
        if not isinstance(df, DataFrame):
            raise TypeError(f"df must be a DataFrame, got {type(df).__name__}")
        if df.isStreaming:
            return self.buildStreaming(df)
        return self.buildBatch(df)

    def buildStreaming(self, df: DataFrame) -> DataStreamWriter:
        """:meth:`build` for a streaming DataFrame, typed as a ``DataStreamWriter``.

        :param df: a streaming DataFrame (columns as for :meth:`build`).
        :return: ``df.writeStream``, configured.
        :raises TypeError: ``df`` is not a streaming DataFrame.
        :raises ValueError: an option value is invalid or an input column is missing (as for :meth:`build`).

        Example::

            >>> events = KinesisSources.kinesis("clicks").withRegion("eu-west-1").build(spark)
            >>> writer = KinesisSinks.kinesis("copy", col("partitionKey"), col("data")).buildStreaming(events)
            >>> type(writer).__name__
            'DataStreamWriter'
        """
        if not isinstance(df, DataFrame) or not df.isStreaming:
            raise TypeError("df must be a streaming DataFrame; use buildBatch for a batch one")
        self._check_with_jvm(df, streaming=True)
        return self._input(df).writeStream.format(FORMAT).options(**self.options())

    def buildBatch(self, df: DataFrame) -> DataFrameWriter:
        """:meth:`build` for a batch DataFrame, typed as a ``DataFrameWriter`` (append mode).

        :param df: a batch DataFrame (columns as for :meth:`build`).
        :return: ``df.write``, configured in append mode; ``save()`` writes.
        :raises TypeError: ``df`` is not a batch DataFrame.
        :raises ValueError: an option value is invalid or an input column is missing (as for :meth:`build`).

        Example::

            >>> rows = spark.createDataFrame([("u1", '{"page": "/home"}')], ["user", "json"])
            >>> sink = KinesisSinks.kinesis("events", col("user"), col("json")).withRegion("eu-west-1")
            >>> writer = sink.buildBatch(rows)
            >>> type(writer).__name__
            'DataFrameWriter'
        """
        if not isinstance(df, DataFrame) or df.isStreaming:
            raise TypeError("df must be a batch DataFrame; use buildStreaming for a streaming one")
        self._check_with_jvm(df, streaming=False)
        return self._input(df).write.format(FORMAT).mode("append").options(**self.options())


class KinesisSources:
    """Entry point of the source, mirroring ``io.github.sparkkinesis.KinesisSources``; needs an active SparkSession
    (classic or Spark Connect).

    Example::

        >>> KinesisSources.kinesis("clicks")
        KinesisSourceBuilder({'streamName': 'clicks'})
    """

    @staticmethod
    def kinesis(streamName: str) -> KinesisSourceBuilder:
        """A source builder for ``streamName``.

        :param streamName: the stream to read; a comma-separated list reads several streams (the column
            ``stream`` tells them apart).
        :return: a :class:`KinesisSourceBuilder` with the option ``streamName`` set.
        :raises TypeError: ``streamName`` is not a ``str``.
        :raises ValueError: ``streamName`` is empty.
        :raises RuntimeError: there is no active SparkSession.

        Example::

            >>> KinesisSources.kinesis("clicks,orders").withRegion("eu-west-1").options()
            {'region': 'eu-west-1', 'streamName': 'clicks,orders'}
        """
        check_str("streamName", streamName)
        if connect_mode():
            return KinesisSourceBuilder(None, {_options.key("streamName"): streamName})
        return KinesisSourceBuilder(call(lambda: connector().KinesisSources.kinesis(streamName)))


class KinesisSinks:
    """Entry point of the sink, mirroring ``io.github.sparkkinesis.KinesisSinks``; needs an active SparkSession
    (classic or Spark Connect).

    Example::

        >>> KinesisSinks.kinesis("copy")
        KinesisSinkBuilder({'streamName': 'copy'})
    """

    @staticmethod
    def kinesis(
        streamName: str, keyColumn: Column | None = None, valueColumn: Column | None = None
    ) -> KinesisSinkBuilder:
        """A sink builder for ``streamName``. Without columns it writes the DataFrame's ``data`` and
        ``partitionKey`` columns; with ``keyColumn`` and ``valueColumn`` it writes those expressions instead.

        :param streamName: the stream to write.
        :param keyColumn: the partition key, cast to a string, e.g. ``col("user")``; give it with ``valueColumn``.
        :param valueColumn: the record's data, a string or binary column, e.g. ``to_json(struct("*"))``.
        :return: a :class:`KinesisSinkBuilder` with the option ``streamName`` set.
        :raises TypeError: ``streamName`` is not a ``str``, or a column is not a ``pyspark.sql.Column``.
        :raises ValueError: ``streamName`` is empty, or only one of the two columns is given.
        :raises RuntimeError: there is no active SparkSession.

        Example::

            >>> rows = spark.createDataFrame([("u1", "/home")], ["user", "page"])
            >>> sink = KinesisSinks.kinesis("events", col("user"), to_json(struct("*"))).withRegion("eu-west-1")
            >>> type(sink.build(rows)).__name__
            'DataFrameWriter'
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
        jkey, jvalue = (private(c, "_jc", "hand the column to the connector's JVM builder") for c in columns)
        return KinesisSinkBuilder(
            call(lambda: connector().KinesisSinks.kinesis(streamName, jkey, jvalue)), None, columns
        )
