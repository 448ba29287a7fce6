"""A PySpark job run by `test_wheel_offline.py` with the interpreter of a fresh venv that only has the wheel.

It uses nothing but what that venv installed: writes records to Kinesis with the sink, reads them back with the
source (Trigger.AvailableNow), and prints one ``RESULT {json}`` line for the test to check: the records that came
back, where `pyspark`, `py4j` and `pyspark_kinesis` were imported from, which distributions the interpreter sees,
and which jar Spark loaded the connector from.

Usage: ``python -I wheel_job.py ENDPOINT STREAM WORK_DIR RECORDS``
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from typing import Any

import py4j
import pyspark
from pyspark.sql import SparkSession
from pyspark.sql.functions import col, concat, lit

import pyspark_kinesis
from pyspark_kinesis import KinesisSinks, KinesisSources, configure_spark

# What the job may take to read everything back; the test's own timeout on the whole process is larger.
READ_TIMEOUT_S = 150


def run(endpoint: str, stream: str, work_dir: str, records: int) -> dict[str, Any]:
    """Write `records` records to `stream`, read them back and report what the test checks."""
    builder = (
        SparkSession.builder.master("local[2]").appName("pyspark-kinesis-wheel").config("spark.ui.enabled", "false")
    )
    spark = configure_spark(builder).getOrCreate()
    try:

        def connect(kinesis: Any) -> Any:
            return kinesis.withEndpoint(endpoint).withRegion("us-east-1").withCredentials("test", "test")

        rows = spark.range(0, records, 1, 2).select(
            concat(lit("key-"), (col("id") % 10).cast("string")).alias("key"),
            concat(lit("record-"), col("id").cast("string")).alias("data"),
        )
        connect(KinesisSinks.kinesis(stream, col("key"), col("data"))).build(rows).save()

        source = connect(KinesisSources.kinesis(stream)).withInitialPosition("trim_horizon").build(spark)
        query = (
            source.selectExpr("partitionKey", "cast(data as string) as data")
            .writeStream.format("memory")
            .queryName("read_back")
            .option("checkpointLocation", f"{work_dir}/checkpoint")
            .trigger(availableNow=True)
            .start()
        )
        if not query.awaitTermination(READ_TIMEOUT_S):
            query.stop()
            raise TimeoutError(f"the AvailableNow read did not finish within {READ_TIMEOUT_S} s")
        if query.exception() is not None:
            raise RuntimeError(f"the read failed: {query.exception()}")
        read_back = [[r.partitionKey, r.data] for r in spark.table("read_back").collect()]

        jvm = spark._jvm
        assert jvm is not None
        provider = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            "kinesis", spark._jsparkSession.sessionState().conf()
        )
        return {
            "records": read_back,
            "spark_jars": spark.sparkContext.getConf().get("spark.jars"),
            "provider_class": provider.getName(),
            "provider_origin": provider.getProtectionDomain().getCodeSource().getLocation().getPath(),
            "modules": {m.__name__: m.__file__ for m in (pyspark, py4j, pyspark_kinesis)},
            "sys_path": sys.path,
            "distributions": sorted(str(d.metadata["Name"]) for d in importlib.metadata.distributions()),
        }
    finally:
        spark.stop()


if __name__ == "__main__":
    endpoint_arg, stream_arg, work_dir_arg, records_arg = sys.argv[1:5]
    print("RESULT " + json.dumps(run(endpoint_arg, stream_arg, work_dir_arg, int(records_arg))), flush=True)
