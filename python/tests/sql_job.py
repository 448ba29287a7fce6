"""Runs the SQL functions in a session of its own (spark.sql.extensions is fixed when a session starts).

Usage: sql_job.py ENDPOINT STREAM. Prints one JSON object: what each query returned or how it failed.
"""

from __future__ import annotations

import json
import sys
import tempfile

from pyspark.sql import SparkSession

from pyspark_kinesis import configure_spark


def main(endpoint: str, stream: str) -> None:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("sql-functions")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.extensions", "io.github.sparkkinesis.KinesisSparkExtensions")
    )
    spark = configure_spark(builder).getOrCreate()
    connection = (
        f"endpoint => '{endpoint}', region => 'us-east-1', awsAccessKey => 'test', "
        f"awsSecretKey => 'sql-job-secret-marker'"
    )
    read = f"read_kinesis(streamName => '{stream}', {connection}, initialPosition => 'trim_horizon')"
    out: dict[str, object] = {}
    out["records"] = sorted(r.data for r in spark.sql(f"SELECT CAST(data AS STRING) AS data FROM {read}").collect())
    out["shards"] = [
        r.asDict() for r in spark.sql(f"SELECT * FROM kinesis_shards(streamName => '{stream}', {connection})").collect()
    ]
    stream_df = spark.sql(f"SELECT CAST(data AS STRING) AS data FROM STREAM {read}")
    with tempfile.TemporaryDirectory(prefix="sql-job-") as checkpoint:
        query = (
            stream_df.writeStream.format("memory")
            .queryName("streamed")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        out["streamed"] = sorted(r.data for r in spark.sql("SELECT data FROM streamed").collect())
    out["explain"] = "\n".join(r[0] for r in spark.sql(f"EXPLAIN EXTENDED SELECT * FROM {read}").collect())
    try:
        spark.sql(f"SELECT * FROM read_kinesis(streamName => '{stream}', maxRecordsPerFetch => 0)")
        out["error"] = None
    except Exception as e:  # noqa: BLE001 - the message is what the test checks
        out["error"] = str(e)
    spark.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
