"""The typed builders: options mapping, argument checks, JVM error translation, and a round trip through them."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest
from pyspark.sql import SparkSession
from pyspark.sql.functions import col, concat, lit, struct, to_json

from pyspark_kinesis import KinesisSinks, KinesisSources, RetryStrategies


def test_every_source_method_sets_its_option_and_options_is_the_exact_map(spark: SparkSession) -> None:
    builder = (
        KinesisSources.kinesis("clicks")
        .withRegion("eu-west-1")
        .withEndpoint("http://127.0.0.1:4566")
        .withCredentials("AKIA", "secret")
        .withInitialPosition("trim_horizon")
        .withMaxRecordsPerTrigger(100)
        .withMaxRecordsPerFetch(500)
        .withShardsPerTask(2)
        .withFailOnDataLoss(False)
        .withFetchBufferSize("64m")
        .withMaxIdlePollInterval("2s")
        .withRetryStrategy(RetryStrategies.exponential(100, 2000, maxAttempts=5))
        .withOption("shardFetchInterval", "5s")
    )
    assert builder.options() == {
        "streamName": "clicks",
        "region": "eu-west-1",
        "endpoint": "http://127.0.0.1:4566",
        "awsAccessKey": "AKIA",
        "awsSecretKey": "secret",
        "initialPosition": "trim_horizon",
        "maxRecordsPerTrigger": "100",
        "maxRecordsPerFetch": "500",
        "shardsPerTask": "2",
        "failOnDataLoss": "false",
        "fetchBufferSize": "64m",
        "maxIdlePollInterval": "2s",
        "retryMaxAttempts": "5",
        "retryInitialBackoff": "100ms",
        "retryMaxBackoff": "2000ms",
        "shardFetchInterval": "5s",
    }
    assert "secret" not in repr(builder)


def test_enhanced_fan_out_methods(spark: SparkSession) -> None:
    assert KinesisSources.kinesis("s").withEnhancedFanOut().options() == {"streamName": "s", "consumerMode": "efo"}
    assert KinesisSources.kinesis("s").withEnhancedFanOut("app").withRequireConsumerDeregistration(True).options() == {
        "streamName": "s",
        "consumerMode": "efo",
        "consumerName": "app",
        "requireConsumerDeregistration": "true",
    }
    with pytest.raises(TypeError, match="consumerName must be a str"):
        KinesisSources.kinesis("s").withEnhancedFanOut(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="deregister must be a bool"):
        KinesisSources.kinesis("s").withRequireConsumerDeregistration("yes")  # type: ignore[arg-type]


def test_sink_methods_and_retry_strategies(spark: SparkSession) -> None:
    builder = KinesisSinks.kinesis("out").withMaxInFlightRequests(2).withPreserveKeyOrder(True)
    assert builder.withRetryStrategy(RetryStrategies.indefinitely(250)).options() == {
        "streamName": "out",
        "maxInFlightRequests": "2",
        "preserveKeyOrder": "true",
        "retryMaxAttempts": "unlimited",
        "retryInitialBackoff": "250ms",
        "retryMaxBackoff": "250ms",
    }
    assert RetryStrategies.defaultStrategy().options()["retryMaxBackoff"] == "3000ms"


def test_with_aggregation_sets_kpl_and_its_limits(spark: SparkSession) -> None:
    assert KinesisSinks.kinesis("out").withAggregation().options() == {"streamName": "out", "aggregation": "kpl"}
    assert KinesisSinks.kinesis("out").withAggregation(maxBytes=65536, maxRecords=200, lingerMs=50).options() == {
        "streamName": "out",
        "aggregation": "kpl",
        "aggregationMaxBytes": "65536",
        "aggregationMaxRecords": "200",
        "aggregationLingerMs": "50",
    }


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: KinesisSources.kinesis(""), ValueError, "streamName must not be empty"),
        (lambda: KinesisSources.kinesis(3), TypeError, "streamName must be a str, got int"),
        (lambda: KinesisSources.kinesis("s").withShardsPerTask("2"), TypeError, "shards must be an int, got str"),
        (lambda: KinesisSources.kinesis("s").withMaxRecordsPerTrigger(0), ValueError, "records must be at least 1"),
        (lambda: KinesisSources.kinesis("s").withFailOnDataLoss("no"), TypeError, "fail must be a bool"),
        (lambda: KinesisSources.kinesis("s").withFetchBufferSize(6.4), TypeError, "size must be a size"),
        (lambda: KinesisSources.kinesis("s").withMaxIdlePollInterval(1.5), TypeError, "interval must be a duration"),
        (lambda: KinesisSources.kinesis("s").withRetryStrategy(250), TypeError, "strategy must be a RetryStrategy"),
        (lambda: KinesisSinks.kinesis("s", col("k")), ValueError, "keyColumn and valueColumn go together"),
        (lambda: KinesisSinks.kinesis("s", "k", "v"), TypeError, "keyColumn must be a pyspark.sql.Column"),
        (lambda: KinesisSinks.kinesis("s").withAggregation(65536), TypeError, "positional argument"),
        (lambda: KinesisSinks.kinesis("s").withAggregation(maxBytes=2.5), TypeError, "maxBytes must be a size"),
        (lambda: KinesisSinks.kinesis("s").withAggregation(maxBytes="64 kilo"), ValueError, "maxBytes must be a size"),
        (lambda: KinesisSinks.kinesis("s").withAggregation(maxBytes=100), ValueError, "maxBytes must be at least 1024"),
        (lambda: KinesisSinks.kinesis("s").withAggregation(maxRecords=0), ValueError, "maxRecords must be at least 1"),
        (lambda: KinesisSinks.kinesis("s").withAggregation(lingerMs=2.5), TypeError, "lingerMs must be a duration"),
    ],
)
def test_bad_arguments_are_refused_in_python_naming_the_argument(
    spark: SparkSession, call: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


def test_a_bad_option_value_arrives_as_valueerror_with_the_jvm_message(spark: SparkSession) -> None:
    with pytest.raises(ValueError) as raised:
        KinesisSources.kinesis("s").withMaxRecordsPerFetch(20000).build(spark)
    assert (
        str(raised.value) == "Invalid value '20000' for option 'maxRecordsPerFetch': expected an integer in 1..10000."
    )
    assert "py4j" not in str(raised.value).lower()


def test_an_aggregation_limit_past_the_jvm_range_arrives_with_the_jvm_message(spark: SparkSession) -> None:
    df = spark.range(1).selectExpr("'k' as partitionKey", "'d' as data")
    with pytest.raises(ValueError) as raised:
        KinesisSinks.kinesis("s").withAggregation(maxBytes=65536, maxRecords=10, lingerMs=70000).build(df)
    assert str(raised.value) == (
        "Invalid value '70000' for option 'aggregationLingerMs': expected an integer in 1..60000."
    )


def test_round_trip_through_the_builders_only(spark: SparkSession, kinesis_endpoint: str, tmp_path: Path) -> None:
    stream = f"py-{uuid.uuid4().hex[:8]}"
    client = boto3.client(
        "kinesis",
        endpoint_url=kinesis_endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_stream(StreamName=stream, ShardCount=2)
    client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})

    def connect(builder: Any) -> Any:
        return builder.withEndpoint(kinesis_endpoint).withRegion("us-east-1").withCredentials("test", "test")

    events = spark.range(0, 50).select(concat(lit("user-"), (col("id") % 7).cast("string")).alias("user"), col("id"))
    writer = connect(KinesisSinks.kinesis(stream, col("user"), to_json(struct("user", "id")))).build(events)
    writer.save()

    source = connect(KinesisSources.kinesis(stream)).withInitialPosition("trim_horizon").build(spark)
    out = str(tmp_path / "table")
    query = (
        source.selectExpr("partitionKey", "cast(data as string) as json")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    rows = spark.read.parquet(out).collect()
    assert sorted(r.json for r in rows) == sorted(f'{{"user":"user-{i % 7}","id":{i}}}' for i in range(50))
    assert all(r.json.startswith(f'{{"user":"{r.partitionKey}"') for r in rows)


def _jvm_and_python_methods(jbuilder: Any, python_class: type) -> tuple[set[str], set[str]]:
    prefixes = ("with", "build")
    jvm_methods = {str(m.getName()) for m in jbuilder.getClass().getMethods() if str(m.getName()).startswith(prefixes)}
    return jvm_methods, {m for m in dir(python_class) if m.startswith(prefixes)}


def test_every_jvm_builder_method_has_its_python_twin(spark: SparkSession) -> None:
    from pyspark_kinesis import KinesisSinkBuilder, KinesisSourceBuilder

    for builder, python_class in (
        (KinesisSources.kinesis("s"), KinesisSourceBuilder),
        (KinesisSinks.kinesis("s"), KinesisSinkBuilder),
    ):
        jvm_methods, python_methods = _jvm_and_python_methods(builder._j, python_class)
        assert jvm_methods - python_methods == set(), f"{python_class.__name__}: JVM methods missing in Python"


def test_repr_masks_every_secret_while_options_keep_them(spark: SparkSession) -> None:
    secrets = {
        "awsAccessKey": "AKIDmarker01",
        "awsSecretKey": "marker-secret-02",
        "awsSessionToken": "marker-token-03",
        "roleExternalId": "marker-external-04",
        "proxyPassword": "marker-proxy-05",
    }
    for builder in (KinesisSources.kinesis("s"), KinesisSinks.kinesis("s")):
        configured = (
            builder.withCredentials(secrets["awsAccessKey"], secrets["awsSecretKey"], secrets["awsSessionToken"])
            .withRoleArn("arn:aws:iam::123456789012:role/r", secrets["roleExternalId"])
            .withProxy("proxy.example.com", 3128, "svc", secrets["proxyPassword"])
        )
        assert {k: configured.options()[k] for k in secrets} == secrets
        for value in secrets.values():
            assert value not in repr(configured) and value not in str(configured)
