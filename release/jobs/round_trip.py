"""A streaming write and a streaming read through the installed pyspark-kinesis wheel, on whatever PySpark runs it.

Run by release/tests/test_spark_lines.py with a venv's python, from a folder outside the checkout: it imports
pyspark_kinesis from the wheel and nothing else of ours. Uses only PySpark and pyspark_kinesis (the venvs hold no
boto3); the test reads the stream with boto3 itself.

1. ``COUNT`` rows written as parquet, then streamed into the stream by the sink (``Trigger.AvailableNow``).
2. The stream read back by the source from ``trim_horizon`` (``Trigger.AvailableNow``) into a memory table.
3. One line ``RESULT {json}``: the Spark version, the records read, and the jar the ``kinesis`` provider was loaded
   from.

Usage: ``python round_trip.py ENDPOINT STREAM WORK_DIR COUNT``
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, concat, lit
from pyspark.sql.streaming.query import StreamingQuery

from pyspark_kinesis import KinesisSinks, KinesisSources, configure_spark

#: Both queries stop by themselves at the end of their input; this only bounds a hang.
QUERY_TIMEOUT_S = 180


def finish(query: StreamingQuery, what: str) -> None:
    """Waits for an AvailableNow query to stop by itself; a hang or a failure is an error naming ``what``."""
    if not query.awaitTermination(QUERY_TIMEOUT_S):
        query.stop()
        raise TimeoutError(f"the {what} did not stop within {QUERY_TIMEOUT_S} s")
    if query.exception() is not None:
        raise RuntimeError(f"the {what} failed: {query.exception()}")


def main(endpoint: str, stream: str, work_dir: str, count: int) -> dict[str, Any]:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("spark-lines-round-trip")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", f"{work_dir}/warehouse")
        # The SQL extension's rules look at every plan the session analyses: they must load on every line too.
        .config("spark.sql.extensions", "io.github.sparkkinesis.KinesisSparkExtensions")
    )
    spark = configure_spark(builder).getOrCreate()
    try:
        rows = spark.range(0, count, 1, 2).select(
            concat(lit("key-"), col("id").cast("string")).alias("partitionKey"),
            concat(lit("record-"), col("id").cast("string")).alias("data"),
        )
        rows.write.parquet(f"{work_dir}/input")
        source_rows = spark.readStream.schema(rows.schema).parquet(f"{work_dir}/input")

        write = (
            KinesisSinks.kinesis(stream)
            .withEndpoint(endpoint)
            .withRegion("us-east-1")
            .withCredentials("test", "test")
            .buildStreaming(source_rows)
            .option("checkpointLocation", f"{work_dir}/write-checkpoint")
            .trigger(availableNow=True)
            .start()
        )
        finish(write, "streaming write")

        read = (
            KinesisSources.kinesis(stream)
            .withEndpoint(endpoint)
            .withRegion("us-east-1")
            .withCredentials("test", "test")
            .withInitialPosition("trim_horizon")
            .buildStreaming(spark)
            .selectExpr("partitionKey", "CAST(data AS STRING) AS data", "shardId", "sequenceNumber")
            .writeStream.format("memory")
            .queryName("read_back")
            .option("checkpointLocation", f"{work_dir}/read-checkpoint")
            .trigger(availableNow=True)
            .start()
        )
        finish(read, "streaming read")

        jvm = spark._jvm
        assert jvm is not None
        provider = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            "kinesis", spark._jsparkSession.sessionState().conf()
        )
        return {
            "spark": spark.version,
            "records": [
                {
                    "partitionKey": r.partitionKey,
                    "data": r.data,
                    "shardId": r.shardId,
                    "sequenceNumber": r.sequenceNumber,
                }
                for r in spark.table("read_back").collect()
            ],
            "provider_jar": provider.getProtectionDomain().getCodeSource().getLocation().getPath(),
        }
    finally:
        spark.stop()


if __name__ == "__main__":
    endpoint_arg, stream_arg, work_dir_arg, count_arg = sys.argv[1:5]
    result = main(endpoint_arg, stream_arg, work_dir_arg, int(count_arg))
    print("RESULT " + json.dumps(result), flush=True)
