"""Spark 3.5: the `spark-kinesis_2.12` jar on PySpark 3.5 (Scala 2.12), in the venv `make python-test-spark35` makes.

Small on purpose (`make test` has a few minutes for it): the features themselves are tested on Spark 4 (the JVM
integration tests and python/tests); here the same sources, built for Spark 3.5, write and read Kinesis, a query
restarts from its checkpoint, Trigger.AvailableNow stops at the tip, the SQL functions run, a Spark 4-only option is
refused. `spark-submit --packages` of the 2.12 artifact onto a cluster's executors is release/tests/test_packages.py's
(from dist/maven, as a user resolves it).
"""

from __future__ import annotations

import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pyspark
import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import IllegalArgumentException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import col, concat, lit

from pyspark_kinesis import KinesisSinks, KinesisSources, configure_spark, connector_jar

REPO = Path(__file__).resolve().parents[2]
JOB = Path(__file__).resolve().parent / "packages_job.py"
VERSION = next(line.split('"')[1] for line in (REPO / "version.sbt").read_text().splitlines() if "version :=" in line)
COORDINATES = f"io.github.sparkkinesis:spark-kinesis_2.12:{VERSION}"


def kinesis(endpoint: str) -> Any:
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def new_stream(endpoint: str, prefix: str, shards: int) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client = kinesis(endpoint)
    client.create_stream(StreamName=name, ShardCount=shards)
    client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    return name


def stored(endpoint: str, stream: str) -> list[str]:
    """Every record's data in a stream, read with boto3 (independent of the connector)."""
    client = kinesis(endpoint)
    out: list[str] = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            response = client.get_records(ShardIterator=iterator, Limit=10000)
            if not response["Records"]:
                break
            out.extend(r["Data"].decode() for r in response["Records"])
            iterator = response.get("NextShardIterator")
    return out


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("pyspark-kinesis-spark35")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.extensions", "io.github.sparkkinesis.KinesisSparkExtensions")
    )
    session = configure_spark(builder).getOrCreate()
    try:
        yield session
    finally:
        session.stop()


def connect(builder: Any, endpoint: str) -> Any:
    return builder.withEndpoint(endpoint).withRegion("us-east-1").withCredentials("test", "test")


def records(spark: SparkSession, start: int, end: int) -> DataFrame:
    return spark.range(start, end, 1, 2).select(
        concat(lit("key-"), (col("id") % 7).cast("string")).alias("key"),
        concat(lit("record-"), col("id").cast("string")).alias("data"),
    )


def test_configure_spark_loads_the_scala_212_jar_on_pyspark_35(spark: SparkSession) -> None:
    assert pyspark.__version__.startswith("3.5.") and spark.version.startswith("3.5.")
    jar = Path(connector_jar())
    assert jar.name.startswith("spark-kinesis-assembly_2.12-"), jar
    assert spark.sparkContext.getConf().get("spark.jars") == str(jar)
    jvm = spark._jvm
    assert jvm is not None
    provider = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
        "kinesis", spark._jsparkSession.sessionState().conf()
    )
    assert provider.getProtectionDomain().getCodeSource().getLocation().getPath() == str(jar)


def test_the_212_jar_holds_the_connector_and_relocated_classes_only() -> None:
    with zipfile.ZipFile(connector_jar("2.12")) as jar:
        classes = [n for n in jar.namelist() if n.endswith(".class")]
    # org/apache/spark/sparkkinesis: the one shim that reaches Spark's private RPC (as in the Spark 4 jar).
    foreign = [c for c in classes if not c.startswith(("io/github/sparkkinesis/", "org/apache/spark/sparkkinesis/"))]
    assert foreign == [], foreign[:10]
    # The 2.12 build's CollectionConverters shim is relocated: Spark 3.5's scala-collection-compat has the name.
    assert "io/github/sparkkinesis/shaded/scala/jdk/CollectionConverters$.class" in classes


def test_sink_then_source_with_available_now_and_a_restart(
    spark: SparkSession, kinesis_endpoint: str, tmp_path: Path
) -> None:
    source_stream = new_stream(kinesis_endpoint, "s35-in", 2)
    copy_stream = new_stream(kinesis_endpoint, "s35-out", 1)
    checkpoint = str(tmp_path / "checkpoint")

    def copy_available_now() -> int:
        """Kinesis to Kinesis, the source's rows written back unchanged by the streaming sink; stops at the tip.
        Returns the records the sink reported written in the query's progress."""
        events = connect(KinesisSources.kinesis(source_stream), kinesis_endpoint).withInitialPosition("trim_horizon")
        writer = connect(KinesisSinks.kinesis(copy_stream), kinesis_endpoint).build(events.build(spark))
        query = writer.option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
        assert query.awaitTermination(180), "the AvailableNow query did not stop at the tip"
        assert query.exception() is None, query.exception()
        return sum(int(p["sink"].get("metrics", {}).get("recordsWritten", 0)) for p in query.recentProgress)

    # The batch sink, then the source and the streaming sink.
    connect(KinesisSinks.kinesis(source_stream, col("key"), col("data")), kinesis_endpoint).build(
        records(spark, 0, 200)
    ).save()
    assert copy_available_now() == 200
    assert sorted(stored(kinesis_endpoint, copy_stream)) == sorted(f"record-{i}" for i in range(200))

    # A restart from the checkpoint takes exactly the records written since.
    connect(KinesisSinks.kinesis(source_stream, col("key"), col("data")), kinesis_endpoint).build(
        records(spark, 200, 300)
    ).save()
    assert copy_available_now() == 100
    assert sorted(stored(kinesis_endpoint, copy_stream)) == sorted(f"record-{i}" for i in range(300))


def test_sql_functions_run_on_spark_35(spark: SparkSession, kinesis_endpoint: str) -> None:
    stream = new_stream(kinesis_endpoint, "s35-sql", 1)
    client = kinesis(kinesis_endpoint)
    for i in range(5):
        client.put_record(StreamName=stream, PartitionKey=f"k{i}", Data=f"sql-{i}".encode())
    connection = (
        f"streamName => '{stream}', endpoint => '{kinesis_endpoint}', region => 'us-east-1', "
        "awsAccessKey => 'test', awsSecretKey => 'test'"
    )
    rows = spark.sql(
        f"SELECT CAST(data AS STRING) AS d FROM read_kinesis({connection}, initialPosition => 'trim_horizon')"
    ).collect()
    assert sorted(r.d for r in rows) == [f"sql-{i}" for i in range(5)]
    shards = spark.sql(f"SELECT shardId, isOpen FROM kinesis_shards({connection})").collect()
    assert [(r.shardId, r.isOpen) for r in shards] == [("shardId-000000000000", True)]
    # Streaming SQL (FROM STREAM) is Spark 4 only: Spark 3.5 refuses the query, it never runs it as a batch.
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR|Syntax error"):
        spark.sql(f"SELECT * FROM STREAM read_kinesis({connection})")


def test_a_spark_4_only_option_is_refused_saying_so(spark: SparkSession) -> None:
    builder = KinesisSources.kinesis("any").withMaxBytesPerTrigger(1 << 20)
    with pytest.raises(
        (ValueError, IllegalArgumentException, Py4JJavaError),
        match=r"Option 'maxBytesPerTrigger' \(value '1048576'\) needs Spark 4\.0 or later",
    ):
        builder.build(spark)
    with pytest.raises(Exception, match=r"needs Spark 4\.0 or later"):
        spark.readStream.format("kinesis").option("streamName", "any").option("maxBytesPerTrigger", "1m").load()
