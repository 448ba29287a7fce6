"""The sink from PySpark (the newest Spark on PyPI), read back with boto3: a reader independent of the JVM SDK."""

from __future__ import annotations

import uuid
from collections import defaultdict
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from stream_reads import kinesis_client, records_by_shard


def _read_all(client: Any, stream: str) -> list[dict[str, Any]]:
    return [record for _, records in records_by_shard(client, stream) for record in records]


def test_batch_write_reads_back_with_boto3(spark: SparkSession, kinesis_endpoint: str) -> None:
    client = kinesis_client(kinesis_endpoint)
    stream = f"py-sink-{uuid.uuid4().hex[:8]}"
    client.create_stream(StreamName=stream, ShardCount=2)
    client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})

    df = spark.range(0, 600, 1, 2).select(
        F.concat(F.lit("user-"), (F.col("id") / 50).cast("long").cast("string")).alias("partitionKey"),
        F.to_json(F.struct(F.col("id"))).alias("data"),
    )
    (
        df.write.format("kinesis")
        .mode("append")
        .option("streamName", stream)
        .option("endpoint", kinesis_endpoint)
        .option("region", "us-east-1")
        .option("awsAccessKey", "test")
        .option("awsSecretKey", "test")
        .save()
    )

    records = _read_all(client, stream)
    ids_by_key: dict[str, list[int]] = defaultdict(list)
    for record in records:
        ident = int(record["Data"].decode("utf-8").split(":")[1].rstrip("}"))
        assert record["PartitionKey"] == f"user-{ident // 50}"
        ids_by_key[record["PartitionKey"]].append(ident)
    assert sorted(i for ids in ids_by_key.values() for i in ids) == list(range(600))
    for key, ids in ids_by_key.items():
        assert ids == sorted(ids), f"{key} out of order"
