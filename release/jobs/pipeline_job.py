"""A user's pipeline, given the connector only by `spark-submit --packages`: Kinesis -> Spark -> Kinesis.

Reads every record of one stream with the source (`Trigger.AvailableNow`) and writes each, upper-cased, to another
through the sink, in one streaming query; then prints one ``RESULT {json}`` line: the Spark version, where the
driver loaded the connector from, and the executors the application had. Uses `format("kinesis")` only: the Maven
artifact under test, not the Python package.

Usage: ``spark-submit --packages ... pipeline_job.py ENDPOINT SOURCE_STREAM SINK_STREAM WORK_DIR``
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, upper

endpoint, source, sink, work_dir = sys.argv[1:5]
spark = SparkSession.builder.appName("spark-kinesis-release-pipeline").getOrCreate()
try:
    connection = {"endpoint": endpoint, "region": "us-east-1", "awsAccessKey": "test", "awsSecretKey": "test"}
    query = (
        spark.readStream.format("kinesis")
        .options(**connection)
        .option("streamName", source)
        .option("initialPosition", "trim_horizon")
        .load()
        .select(col("partitionKey"), upper(col("data").cast("string")).alias("data"))
        .writeStream.format("kinesis")
        .options(**connection)
        .option("streamName", sink)
        .option("checkpointLocation", f"{work_dir}/checkpoint")
        .trigger(availableNow=True)
        .start()
    )
    if not query.awaitTermination(240):
        query.stop()
        raise TimeoutError("the AvailableNow pipeline did not stop at the tip within 240 s")
    if query.exception() is not None:
        raise RuntimeError(f"the pipeline failed: {query.exception()}")
    jvm = spark._jvm
    assert jvm is not None
    provider = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
        "kinesis", spark._jsparkSession.sessionState().conf()
    )
    progress = query.recentProgress
    print(
        "RESULT "
        + json.dumps(
            {
                "spark": spark.version,
                "provider_origin": provider.getProtectionDomain().getCodeSource().getLocation().getPath(),
                "executors": sorted(spark.sparkContext._jsc.sc().getExecutorIds().mkString(",").split(",")),
                "rows": sum(p["numInputRows"] for p in progress),
            }
        ),
        flush=True,
    )
finally:
    spark.stop()
