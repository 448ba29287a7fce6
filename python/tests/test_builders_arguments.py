"""The builders' Python argument types: durations, sizes, timestamps, fixed choices, keyword-only limits, and the
source's build family.

Each argument is converted once, in Python, before py4j: so the JVM builder (classic session) and the options
computed for Spark Connect receive the same value, which these tests hold method by method.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any, get_args

import pytest
from connect_mode import computing
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.readwriter import DataFrameWriter
from pyspark.sql.streaming.readwriter import DataStreamWriter

from pyspark_kinesis import (
    FlowControl,
    InitialPosition,
    KinesisSinkBuilder,
    KinesisSinks,
    KinesisSources,
    RetryStrategies,
    _options,
)

JAN_31_NOON_UTC = 1_738_324_800_000  # 2025-01-31T12:00:00Z in epoch milliseconds
CET = timezone(timedelta(hours=1))


def _jvm_and_computed(
    make: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, str], dict[str, str]]:
    jvm = make()
    with computing(monkeypatch):
        computed = make()
    assert jvm._j is not None and computed._j is None
    return jvm.options(), computed.options()


# (builder, the options it must set besides streamName)
CONVERSIONS: list[tuple[Callable[[], Any], dict[str, str]]] = [
    (
        lambda: (
            KinesisSources.kinesis("s")
            .withMinFetchPeriod(timedelta(milliseconds=250))
            .withMaxFetchDuration(5000)
            .withShardFetchInterval("2s")
            .withMaxIdlePollInterval(timedelta(minutes=1))
        ),
        {
            "minFetchPeriod": "250ms",
            "maxFetchDuration": "5000ms",
            "shardFetchInterval": "2s",
            "maxIdlePollInterval": "60000ms",
        },
    ),
    (
        lambda: KinesisSources.kinesis("s").withMaxBytesPerTrigger("64m").withFetchBufferSize(64 << 20),
        {"maxBytesPerTrigger": str(64 << 20), "fetchBufferSize": str(64 << 20)},
    ),
    (
        lambda: KinesisSources.kinesis("s").withMaxBytesPerTrigger(" 1G ").withFetchBufferSize("512k"),
        {"maxBytesPerTrigger": str(1 << 30), "fetchBufferSize": "512k"},
    ),
    (
        lambda: KinesisSources.kinesis("s").withInitialTimestamp(datetime(2025, 1, 31, 13, 0, tzinfo=CET)),
        {"initialPosition": "at_timestamp", "initialTimestamp": str(JAN_31_NOON_UTC)},
    ),
    (
        lambda: KinesisSources.kinesis("s").withInitialTimestamp(datetime(2025, 1, 31, 12, 0, 0, 999, timezone.utc)),
        {"initialPosition": "at_timestamp", "initialTimestamp": str(JAN_31_NOON_UTC)},
    ),
    (
        lambda: KinesisSources.kinesis("s").withInitialTimestamp(0),
        {"initialPosition": "at_timestamp", "initialTimestamp": "0"},
    ),
    (lambda: KinesisSources.kinesis("s").withInitialPosition("TRIM_HORIZON"), {"initialPosition": "trim_horizon"}),
    (
        lambda: KinesisSources.kinesis("s").withInitialPosition(
            {"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}
        ),
        {"initialPosition": '{"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}'},
    ),
    (
        lambda: KinesisSources.kinesis("s").withInitialPosition(
            '{"shardId-000000000000": {"at_sequence_number": "1"}}'
        ),
        {"initialPosition": '{"shardId-000000000000": {"at_sequence_number": "1"}}'},
    ),
    (
        lambda: KinesisSinks.kinesis("s").withMaxBytesPerRequest("5m").withFlowControl("AIMD"),
        {"maxBytesPerRequest": str(5 << 20), "flowControl": "aimd"},
    ),
    (
        lambda: KinesisSinks.kinesis("s").withAggregation(
            maxBytes="64k", maxRecords=100, lingerMs=timedelta(microseconds=20_000)
        ),
        {
            "aggregation": "kpl",
            "aggregationMaxBytes": "65536",
            "aggregationMaxRecords": "100",
            "aggregationLingerMs": "20",
        },
    ),
    (
        lambda: KinesisSinks.kinesis("s").withAggregation(lingerMs="1s"),
        {"aggregation": "kpl", "aggregationLingerMs": "1000"},
    ),
    (
        lambda: KinesisSinks.kinesis("s").withAggregation(maxRecords=500),
        {"aggregation": "kpl", "aggregationMaxRecords": "500"},
    ),
    (
        lambda: KinesisSinks.kinesis("s").withRetryStrategy(
            RetryStrategies.exponential(timedelta(milliseconds=100), "3s", maxAttempts=4)
        ),
        {"retryInitialBackoff": "100ms", "retryMaxBackoff": "3000ms", "retryMaxAttempts": "4"},
    ),
    (
        lambda: KinesisSinks.kinesis("s").withRetryStrategy(RetryStrategies.indefinitely("1500us")),
        {"retryInitialBackoff": "1ms", "retryMaxBackoff": "1ms", "retryMaxAttempts": "unlimited"},
    ),
]


@pytest.mark.parametrize("make, expected", CONVERSIONS)
def test_python_values_are_converted_once_for_both_sessions(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch, make: Callable[[], Any], expected: dict[str, str]
) -> None:
    jvm, computed = _jvm_and_computed(make, monkeypatch)
    assert jvm == {"streamName": "s", **expected}
    assert computed == jvm


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: KinesisSources.kinesis("s").withMinFetchPeriod(timedelta(milliseconds=-1)),
            ValueError,
            "period must not be negative",
        ),
        (
            lambda: KinesisSources.kinesis("s").withMinFetchPeriod(timedelta(microseconds=1500)),
            ValueError,
            "period must be whole milliseconds",
        ),
        (lambda: KinesisSources.kinesis("s").withMinFetchPeriod(-5), ValueError, "period must be at least 0 ms"),
        (
            lambda: KinesisSources.kinesis("s").withMaxFetchDuration("10 seconds"),
            ValueError,
            "duration must be a duration such as '200ms'",
        ),
        (
            lambda: KinesisSources.kinesis("s").withShardFetchInterval("1.5s"),
            ValueError,
            "interval must be a duration such as",
        ),
        (lambda: KinesisSources.kinesis("s").withShardFetchInterval(True), TypeError, "interval must be a duration"),
        (
            lambda: KinesisSources.kinesis("s").withMaxBytesPerTrigger("1.5m"),
            ValueError,
            "maxBytes must be a size such as",
        ),
        (lambda: KinesisSources.kinesis("s").withMaxBytesPerTrigger("10MiB"), ValueError, "maxBytes must be a size"),
        (lambda: KinesisSources.kinesis("s").withMaxBytesPerTrigger(0), ValueError, "maxBytes must be at least 1"),
        (
            lambda: KinesisSources.kinesis("s").withMaxBytesPerTrigger("9000000p"),
            ValueError,
            "maxBytes must be at most 9223372036854775807",
        ),
        (lambda: KinesisSinks.kinesis("s").withMaxBytesPerRequest(None), TypeError, "maxBytes must be a size"),
        (lambda: KinesisSources.kinesis("s").withFetchBufferSize(""), ValueError, "size must not be empty"),
        (
            lambda: KinesisSources.kinesis("s").withInitialTimestamp(datetime(2025, 1, 31, 12)),
            ValueError,
            "timestamp must be timezone-aware",
        ),
        (
            lambda: KinesisSources.kinesis("s").withInitialTimestamp(datetime(1969, 12, 31, tzinfo=timezone.utc)),
            ValueError,
            "timestamp must not be before 1970",
        ),
        (lambda: KinesisSources.kinesis("s").withInitialTimestamp(-1), ValueError, "timestamp must be at least 0"),
        (
            lambda: KinesisSources.kinesis("s").withInitialTimestamp(1.7e12),
            TypeError,
            "timestamp must be a timezone-aware datetime or an int",
        ),
        (
            lambda: KinesisSources.kinesis("s").withInitialTimestamp("2025-01-31T12:00:00Z"),
            TypeError,
            "timestamp must be a timezone-aware datetime or an int",
        ),
        (
            lambda: KinesisSources.kinesis("s").withInitialPosition("lastest"),
            ValueError,
            "position must be one of 'latest', 'trim_horizon', 'earliest', 'at_timestamp', a JSON object",
        ),
        (lambda: KinesisSources.kinesis("s").withInitialPosition(3), TypeError, "position must be a str"),
        (
            lambda: KinesisSources.kinesis("s").withInitialPosition({"at_timestamp": datetime.now()}),
            TypeError,
            "position must be a mapping of JSON values",
        ),
        (
            lambda: KinesisSinks.kinesis("s").withFlowControl("sideways"),
            ValueError,
            "mode must be one of 'adaptive', 'ladder', 'aimd', 'off', got 'sideways'",
        ),
        (
            lambda: KinesisSinks.kinesis("s").withMaxRecordsPerRequest(2**31),
            ValueError,
            "records must be at most 2147483647",
        ),
        (lambda: KinesisSources.kinesis("s").withProxy("proxy", 0), ValueError, "port must be at least 1"),
        (lambda: KinesisSinks.kinesis("s").withProxy("proxy", 65536), ValueError, "port must be at most 65535"),
        (lambda: KinesisSinks.kinesis("s").withProxy("proxy", "3128"), TypeError, "port must be an int"),
        (
            lambda: KinesisSources.kinesis("s").withProxy("proxy", 3128, username="svc"),
            ValueError,
            "password must be given with username: both, or neither for a proxy without authentication",
        ),
        (
            lambda: KinesisSources.kinesis("s").withProxy("proxy", 3128, password="pw"),
            ValueError,
            "username must be given with password",
        ),
        (lambda: KinesisSinks.kinesis("s").withNonProxyHosts([]), ValueError, "hosts must name at least one host"),
        (lambda: KinesisSinks.kinesis("s").withNonProxyHosts(7), TypeError, "hosts must be a str or a list of str"),
        (lambda: RetryStrategies.indefinitely(timedelta(0)), ValueError, "intervalMs must be at least 1 ms"),
        (
            lambda: RetryStrategies.exponential("1s", "100ms"),
            ValueError,
            r"maxBackoffMs \(100\) must be at least initialBackoffMs \(1000\)",
        ),
        (lambda: RetryStrategies.exponential(100, 200, maxAttempts=0), ValueError, "maxAttempts must be at least 1"),
    ],
)
def test_bad_values_are_refused_in_python_naming_the_argument(
    spark: SparkSession, call: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


def test_the_fixed_choices_are_the_ones_the_connector_documents_and_accepts(spark: SparkSession) -> None:
    flow_doc = _options.find("flowControl")
    position_doc = _options.find("initialPosition")
    assert flow_doc is not None and position_doc is not None
    assert all(mode in flow_doc.doc for mode in get_args(FlowControl))
    assert all(position in position_doc.doc for position in get_args(InitialPosition))

    rows = spark.range(1).selectExpr("'k' as partitionKey", "'d' as data")
    for mode in get_args(FlowControl):
        assert isinstance(KinesisSinks.kinesis("s").withFlowControl(mode).buildBatch(rows), DataFrameWriter)
    for position in get_args(InitialPosition):
        source = KinesisSources.kinesis("s").withInitialPosition(position).withOption("initialTimestamp", "0")
        assert source.build(spark).isStreaming


def test_the_aggregation_limits_are_keyword_only() -> None:
    limits = list(inspect.signature(KinesisSinkBuilder.withAggregation).parameters.values())[1:]
    assert [p.name for p in limits] == ["maxBytes", "maxRecords", "lingerMs"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in limits)


def test_the_source_has_the_sinks_build_family(spark: SparkSession, monkeypatch: pytest.MonkeyPatch) -> None:
    for computed in (False, True):
        with computing(monkeypatch) if computed else contextlib.nullcontext():
            source = KinesisSources.kinesis("clicks").withRegion("eu-west-1")
        streaming, built, batch = source.buildStreaming(spark), source.build(spark), source.buildBatch(spark)
        assert isinstance(streaming, DataFrame) and streaming.isStreaming and built.isStreaming
        assert not batch.isStreaming
        assert streaming.schema == built.schema == batch.schema
        with pytest.raises(ValueError, match="'maxRecordsPerFetch': expected an integer in 1..10000"):
            source.withMaxRecordsPerFetch(20000).buildStreaming(spark)
    for name in ("build", "buildStreaming", "buildBatch"):
        assert hasattr(KinesisSinkBuilder, name) and hasattr(type(source), name)


def test_the_sink_checks_its_input_at_build_and_returns_pysparks_own_writers(spark: SparkSession) -> None:
    with pytest.raises(ValueError, match="the input has no 'data' column"):
        KinesisSinks.kinesis("s").buildBatch(spark.range(1))
    rows = spark.range(1).selectExpr("'k' as partitionKey", "'d' as data")
    events = KinesisSources.kinesis("clicks").build(spark)
    assert type(KinesisSinks.kinesis("s").build(rows)) is DataFrameWriter
    assert type(KinesisSinks.kinesis("s").build(events)) is DataStreamWriter
    with pytest.raises(TypeError, match="df must be a streaming DataFrame"):
        KinesisSinks.kinesis("s").buildStreaming(rows)
    with pytest.raises(TypeError, match="df must be a batch DataFrame"):
        KinesisSinks.kinesis("s").buildBatch(events)
