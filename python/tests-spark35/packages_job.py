"""Run by test_spark35_round_trip.py with `spark-submit --packages io.github.sparkkinesis:spark-kinesis_2.12:<v>` on
`local-cluster`: writes records with the sink and reads them back with the source (Trigger.AvailableNow), both in
the executor JVM, then prints one ``RESULT {json}`` line: the records, where the driver loaded the connector from,
and which executors ran the tasks. Uses only `format("kinesis")`: the artifact, not the Python package.

Usage: ``spark-submit ... packages_job.py ENDPOINT STREAM WORK_DIR``
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, concat, lit

endpoint, stream, work_dir = sys.argv[1:4]
spark = SparkSession.builder.getOrCreate()
try:
    connection = {
        "streamName": stream,
        "endpoint": endpoint,
        "region": "us-east-1",
        "awsAccessKey": "test",
        "awsSecretKey": "test",
    }
    rows = spark.range(0, 100, 1, 2).select(
        concat(lit("key-"), col("id").cast("string")).alias("partitionKey"),
        concat(lit("record-"), col("id").cast("string")).alias("data"),
    )
    rows.write.format("kinesis").options(**connection).mode("append").save()
    query = (
        spark.readStream.format("kinesis")
        .options(**connection)
        .option("initialPosition", "trim_horizon")
        .load()
        .selectExpr("CAST(data AS STRING) AS data")
        .writeStream.format("memory")
        .queryName("read_back")
        .option("checkpointLocation", f"{work_dir}/checkpoint")
        .trigger(availableNow=True)
        .start()
    )
    if not query.awaitTermination(180):
        query.stop()
        raise TimeoutError("the AvailableNow read did not stop at the tip within 180 s")
    if query.exception() is not None:
        raise RuntimeError(f"the read failed: {query.exception()}")
    jvm = spark._jvm
    assert jvm is not None
    provider = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
        "kinesis", spark._jsparkSession.sessionState().conf()
    )
    print(
        "RESULT "
        + json.dumps(
            {
                "spark": spark.version,
                "records": [r.data for r in spark.table("read_back").collect()],
                "provider_origin": provider.getProtectionDomain().getCodeSource().getLocation().getPath(),
                # The sink's and the source's tasks ran there (local-cluster has no tasks in the driver).
                "executors": sorted(spark.sparkContext._jsc.sc().getExecutorIds().mkString(",").split(",")),
            }
        ),
        flush=True,
    )
finally:
    spark.stop()
