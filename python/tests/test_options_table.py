"""The option table the package ships for Spark Connect, and the option maps the builders compute from it.

On a Spark Connect session the builders cannot ask the JVM builders: they must set the same keys with the same
value spellings. These tests hold the computed maps against the JVM builders of a classic session, method by method.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyspark
import pytest
from connect_mode import computing
from pyspark.sql import SparkSession

import pyspark_kinesis
from pyspark_kinesis import KinesisSinks, KinesisSources, RetryStrategies, _connect, _options, connector_jar

PACKAGED_TABLE = Path(pyspark_kinesis.__file__).resolve().parent / "_options.json"


def test_the_packaged_table_is_the_one_the_bundled_jar_generates() -> None:
    spark_jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
    generated = subprocess.run(
        [
            "java",
            "-cp",
            f"{connector_jar()}{os.pathsep}{spark_jars}",
            "io.github.sparkkinesis.options.PythonOptionsTable",
            "-",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert PACKAGED_TABLE.read_text(encoding="utf-8") == generated, (
        "pyspark_kinesis/_options.json differs from the connector jar's KinesisOptions: run 'make python-options'"
    )


def test_the_table_reads_into_options_with_their_secrets_and_defaults() -> None:
    rows = json.loads(PACKAGED_TABLE.read_text(encoding="utf-8"))["options"]
    options = _options.all_options()
    assert [o.key for o in options] == [r["key"] for r in rows]
    assert _options.find("STREAMNAME") is not None and _options.key("streamname") == "streamName"
    assert {o.key for o in options if o.secret} == {
        "awsAccessKey",
        "awsSecretKey",
        "awsSessionToken",
        "roleExternalId",
        "proxyPassword",
    }
    assert _options.find("maxRecordsPerFetch") == _options.KinesisOption(
        "maxRecordsPerFetch", "10000", "source", False, "Limit of one GetRecords call (1..10000)"
    )
    assert _options.find("noSuchOption") is None
    with pytest.raises(RuntimeError, match="'noSuchOption' is not in pyspark_kinesis's options table"):
        _options.key("noSuchOption")


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with computing(monkeypatch):
        yield


Recipe = Callable[[Any], Any]

SOURCE_RECIPES: list[Recipe] = [
    lambda b: b.withRegion("eu-west-1").withEndpoint("http://127.0.0.1:4566"),
    lambda b: b.withCredentials("AKIA", "secret"),
    lambda b: b.withCredentials("AKIA", "secret", "token"),
    lambda b: b.withProfile("dev").withRoleArn("arn:aws:iam::123456789012:role/r"),
    lambda b: b.withRoleArn("arn:aws:iam::123456789012:role/r", "external"),
    lambda b: b.withProxy("proxy.example.com", 3128).withNonProxyHosts("localhost|*.internal"),
    lambda b: b.withProxy("10.0.0.5", 8080, "svc", "pw").withNonProxyHosts(["*.internal", "10.*"]),
    lambda b: b.withInitialPosition("trim_horizon").withInitialTimestamp(1_700_000_000_123),
    lambda b: b.withMaxRecordsPerTrigger(100).withMaxRecordsPerFetch(500).withMaxBytesPerTrigger(1 << 40),
    lambda b: b.withMaxFetchRate(1.5).withMinFetchPeriod("250ms").withMaxFetchDuration("5s"),
    lambda b: b.withMinRecordsPerTrigger(50).withMaxTriggerDelay("30s"),
    lambda b: b.withMaxTriggerDelay(timedelta(minutes=2)),
    lambda b: b.withMaxFetchRate(2),
    lambda b: b.withMaxFetchRate(0.0005),
    lambda b: b.withShardFetchInterval("2s").withShardsPerTask(3).withFailOnDataLoss(False),
    lambda b: b.withFetchBufferSize("64m").withMaxIdlePollInterval("1s"),
    lambda b: b.withEnhancedFanOut(),
    lambda b: b.withEnhancedFanOut("app").withRequireConsumerDeregistration(True),
    lambda b: b.withRegion("us-east-1").withOption("REGION", "eu-west-1").withOption("shardFetchInterval", "5s"),
]

SINK_RECIPES: list[Recipe] = [
    lambda b: b.withRegion("eu-west-1").withCredentials("AKIA", "secret"),
    lambda b: b.withProxy("proxy.example.com", 3128, "svc", "pw").withNonProxyHosts(["*.vpce.amazonaws.com"]),
    lambda b: b.withMaxRecordsPerRequest(100).withMaxBytesPerRequest(1 << 22).withMaxInFlightRequests(2),
    lambda b: b.withPreserveKeyOrder(True).withClusterByPartitionKey(False).withFlowControl("aimd"),
    lambda b: b.withAggregation(),
    lambda b: b.withAggregation(maxBytes=65536, maxRecords=200, lingerMs=50),
]

RETRY_RECIPES: list[Callable[[], Any]] = [
    lambda: RetryStrategies.indefinitely(250),
    lambda: RetryStrategies.exponential(100, 2000),
    lambda: RetryStrategies.exponential(100, 2000, maxAttempts=5),
    lambda: RetryStrategies.defaultStrategy(),
]


def _jvm_and_computed(make: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    jvm = make()
    with computing(monkeypatch):
        computed = make()
    return jvm, computed


BUILDER_RECIPES: list[tuple[Callable[[], Any], Recipe]] = [
    (lambda: KinesisSources.kinesis("clicks"), recipe) for recipe in SOURCE_RECIPES
] + [(lambda: KinesisSinks.kinesis("out"), recipe) for recipe in SINK_RECIPES]


@pytest.mark.parametrize("entry, recipe", BUILDER_RECIPES)
def test_builder_methods_compute_the_jvm_builders_options(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch, entry: Callable[[], Any], recipe: Recipe
) -> None:
    jvm, computed = _jvm_and_computed(lambda: recipe(entry()), monkeypatch)
    assert computed._j is None and jvm._j is not None
    assert computed.options() == jvm.options()
    assert list(computed.options()) == list(jvm.options()), "the same (sorted) order as the JVM's TreeMap"


@pytest.mark.parametrize("make", RETRY_RECIPES)
def test_retry_strategies_compute_the_jvm_options(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch, make: Callable[[], Any]
) -> None:
    jvm, computed = _jvm_and_computed(make, monkeypatch)
    assert computed._j is None and computed.options() == jvm.options()
    built_jvm = KinesisSources.kinesis("s").withRetryStrategy(jvm)
    with computing(monkeypatch):
        built_computed = KinesisSources.kinesis("s").withRetryStrategy(computed)
    assert built_computed.options() == built_jvm.options()


def test_the_computed_retry_strategy_keeps_the_jvms_checks(computed: None) -> None:
    with pytest.raises(ValueError, match=r"maxBackoffMs \(50\) must be at least initialBackoffMs \(100\)"):
        RetryStrategies.exponential(100, 50)
    with pytest.raises(TypeError, match="maxAttempts must be an int"):
        RetryStrategies.exponential(100, 200, maxAttempts="3")  # type: ignore[arg-type]


def test_computed_builders_check_arguments_and_mask_secrets(computed: None) -> None:
    builder = KinesisSources.kinesis("s").withCredentials("AKIDmarker01", "marker-secret-02", "marker-token-03")
    assert builder.options()["awsSecretKey"] == "marker-secret-02"
    for secret in ("AKIDmarker01", "marker-secret-02", "marker-token-03"):
        assert secret not in repr(builder)
    assert repr(builder).startswith("KinesisSourceBuilder(") and "'streamName': 's'" in repr(builder)
    with pytest.raises(TypeError, match="shards must be an int, got str"):
        KinesisSources.kinesis("s").withShardsPerTask("2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keyColumn must be a pyspark.sql.Column"):
        KinesisSinks.kinesis("s", "k", "v")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "value",
    [0.0, -0.0, 1.0, 1.5, 2.0, 0.001, 0.0005, 1e-5, 123456.789, 1e7, 1.25e7, 3e20, -4.5e-9, float("inf"), float("nan")],
)
def test_doubles_are_written_as_the_jvm_writes_them(spark: SparkSession, value: float) -> None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    assert _connect.java_double(value) == str(jvm.java.lang.Double.toString(value))
