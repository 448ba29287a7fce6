"""aggregation=kpl, checked by an independent reader: PyPI's aws-kinesis-agg splits what the sink packed."""

from __future__ import annotations

import base64
import hashlib
import uuid
from pathlib import Path
from typing import Any

from aws_kinesis_agg.deaggregator import iter_deaggregate_records
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from stream_reads import kinesis_client, records_by_shard

from pyspark_kinesis import KinesisSinks, KinesisSources

ROWS = 1200


def _connect(builder: Any, endpoint: str) -> Any:
    return builder.withEndpoint(endpoint).withRegion("us-east-1").withCredentials("test", "test")


def _hash_key(i: int) -> str:
    return str((i % 7) * 2**125)


def _input(spark: SparkSession) -> DataFrame:
    """Every fifth row routed by an explicit hash key (its own keys e0..e6), the others by k0..k39."""
    fifth = F.col("id") % 5 == 0
    return spark.range(0, ROWS, 1, 2).select(
        F.when(fifth, F.concat(F.lit("e"), (F.col("id") % 7).cast("string")))
        .otherwise(F.concat(F.lit("k"), (F.col("id") % 40).cast("string")))
        .alias("partitionKey"),
        F.col("id").cast("string").alias("data"),
        F.when(
            fifth, F.element_at(F.array(*[F.lit(_hash_key(j)) for j in range(7)]), (F.col("id") % 7 + 1).cast("int"))
        ).alias("explicitHashKey"),
    )


def _expected(i: int) -> tuple[str, str | None]:
    return (f"e{i % 7}", _hash_key(i)) if i % 5 == 0 else (f"k{i % 40}", None)


def _in_order(ids: list[int]) -> bool:
    # Each of the two input partitions writes its rows in order; their rows of one key may interleave.
    halves = [[i for i in ids if i < ROWS // 2], [i for i in ids if i >= ROWS // 2]]
    return all(h == sorted(h) for h in halves)


def test_aws_kinesis_agg_and_the_source_read_every_user_record_once_with_its_keys(
    spark: SparkSession, kinesis_endpoint: str, tmp_path: Path
) -> None:
    client = kinesis_client(kinesis_endpoint)
    stream = f"py-agg-{uuid.uuid4().hex[:8]}"
    client.create_stream(StreamName=stream, ShardCount=2)
    client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})

    sink = _connect(KinesisSinks.kinesis(stream), kinesis_endpoint)
    sink.withAggregation(maxBytes=8192, maxRecords=500, lingerMs=1000).build(_input(spark)).save()

    shards = records_by_shard(client, stream)
    raw_count = sum(len(records) for _, records in shards)
    assert raw_count < ROWS // 10, f"{raw_count} Kinesis records for {ROWS} user records: not aggregated"
    found: list[tuple[int, str, str | None]] = []
    aggregated = 0
    for shard, records in shards:
        low, high = (int(shard["HashKeyRange"][k]) for k in ("StartingHashKey", "EndingHashKey"))
        for user in iter_deaggregate_records(records, data_format="Boto3"):
            k = user["kinesis"]
            if k.get("aggregated"):
                aggregated += 1
                data, hash_key = base64.b64decode(k["data"]), k["explicitHashKey"]
            else:
                # GetRecords does not return a plain record's explicit hash key: take the one it must have had.
                data, hash_key = k["data"], _expected(int(k["data"]))[1]
            key = k["partitionKey"]
            routed_by = int(hash_key) if hash_key is not None else int(hashlib.md5(key.encode()).hexdigest(), 16)
            assert low <= routed_by <= high, f"{key} in {shard['ShardId']}, outside its range"
            found.append((int(data), key, hash_key))

    assert aggregated > ROWS * 9 // 10
    assert sorted(i for i, _, _ in found) == list(range(ROWS)), "every user record exactly once"
    for i, key, hash_key in found:
        assert (key, hash_key) == _expected(i), f"record {i}"
    by_key: dict[str, list[int]] = {}
    for i, key, _ in found:
        by_key.setdefault(key, []).append(i)
    assert all(_in_order(ids) for ids in by_key.values())

    source = _connect(KinesisSources.kinesis(stream), kinesis_endpoint).withInitialPosition("trim_horizon")
    rows = sorted(
        source.buildBatch(spark).collect(), key=lambda r: (r.shardId, int(r.sequenceNumber), r.subSequenceNumber)
    )
    ids = [int(bytes(r.data).decode()) for r in rows]
    assert sorted(ids) == list(range(ROWS))
    assert all(r.partitionKey == _expected(int(bytes(r.data).decode()))[0] for r in rows)
    source_by_key: dict[str, list[int]] = {}
    for r in rows:
        source_by_key.setdefault(r.partitionKey, []).append(int(bytes(r.data).decode()))
    assert all(_in_order(v) for v in source_by_key.values())
