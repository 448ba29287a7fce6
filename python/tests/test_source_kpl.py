"""KPL-aggregated records, produced by an independent implementation (aws-kinesis-agg), read through the source."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_kinesis_agg.aggregator import RecordAggregator
from pyspark.sql import SparkSession
from stream_reads import kinesis_client


@pytest.fixture()
def kinesis(kinesis_endpoint: str) -> Any:
    return kinesis_client(kinesis_endpoint)


@pytest.fixture()
def stream(kinesis: Any) -> Iterator[str]:
    name = f"kpl-{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(StreamName=name, ShardCount=1)
    kinesis.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    yield name


def put_aggregate(kinesis: Any, stream: str, records: list[tuple[str, bytes]]) -> str:
    aggregator = RecordAggregator()
    for key, data in records:
        assert aggregator.add_user_record(key, data) is None, "test aggregates must fit in one record"
    key, explicit_hash_key, blob = aggregator.clear_and_get().get_contents()
    args = {"StreamName": stream, "Data": blob, "PartitionKey": key}
    if explicit_hash_key is not None:
        args["ExplicitHashKey"] = explicit_hash_key
    return str(kinesis.put_record(**args)["SequenceNumber"])


def read_all(spark: SparkSession, endpoint: str, stream: str, checkpoint: str, **options: str) -> list[Any]:
    """Reads with Trigger.AvailableNow into a parquet table beside the checkpoint (a sink that supports restarts)."""
    out = checkpoint + "-out"
    reader = (
        spark.readStream.format("kinesis")
        .option("streamName", stream)
        .option("endpoint", endpoint)
        .option("region", "us-east-1")
        .option("awsAccessKey", "test")
        .option("awsSecretKey", "test")
        .option("initialPosition", "trim_horizon")
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    query = (
        reader.load()
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    if query.exception() is not None:
        raise query.exception()  # type: ignore[misc]
    return spark.read.parquet(out).collect()


def test_aggregates_are_split_into_user_records_in_order(
    spark: SparkSession, kinesis: Any, kinesis_endpoint: str, stream: str, tmp_path: Any
) -> None:
    expected: list[tuple[str, bytes, str, int]] = []
    for a in range(3):
        users = [(f"user-{a}-{i % 4}", f"agg{a}-rec{i}".encode()) for i in range(20)]
        seq = put_aggregate(kinesis, stream, users)
        expected += [(k, d, seq, i) for i, (k, d) in enumerate(users)]
    plain = kinesis.put_record(StreamName=stream, Data=b"plain", PartitionKey="p")["SequenceNumber"]
    expected.append(("p", b"plain", plain, 0))

    # Small batches end inside aggregates, so batches resume in the middle of one.
    rows = read_all(spark, kinesis_endpoint, stream, str(tmp_path / "cp"), maxRecordsPerTrigger="7")
    got = [(r.partitionKey, bytes(r.data), r.sequenceNumber, r.subSequenceNumber) for r in rows]
    assert sorted(got, key=lambda t: (int(t[2]), t[3])) == expected
    assert len(got) == len(set(got)) == 61


def unwrite(log_dir: Path, batch: int) -> None:
    """Removes a batch from a Spark metadata log, as if the driver died before writing it."""
    (log_dir / str(batch)).unlink()
    (log_dir / f".{batch}.crc").unlink(missing_ok=True)


def test_a_restart_inside_an_aggregate_neither_repeats_nor_skips(
    spark: SparkSession, kinesis: Any, kinesis_endpoint: str, stream: str, tmp_path: Path
) -> None:
    first = [(f"k{i}", f"first-{i}".encode()) for i in range(10)]
    put_aggregate(kinesis, stream, first)
    checkpoint = tmp_path / "cp"
    rows1 = read_all(spark, kinesis_endpoint, stream, str(checkpoint), maxRecordsPerTrigger="4")
    assert sorted(bytes(r.data) for r in rows1) == sorted(d for _, d in first)
    # Batches 0, 1, 2 took 4, 4 and 2 of the aggregate's records. Forget batch 2 everywhere, as if the driver
    # died before planning it: the checkpoint now ends inside the aggregate, after its 8th record.
    offsets = sorted(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    assert offsets == [0, 1, 2]
    assert '"sub":7' in (checkpoint / "offsets" / "1").read_text()
    for log in (checkpoint / "offsets", checkpoint / "commits", tmp_path / "cp-out" / "_spark_metadata"):
        unwrite(log, 2)
    second = [(f"k{i}", f"second-{i}".encode()) for i in range(10)]
    put_aggregate(kinesis, stream, second)
    rows = read_all(spark, kinesis_endpoint, stream, str(checkpoint), maxRecordsPerTrigger="4")
    assert sorted(bytes(r.data) for r in rows) == sorted(d for _, d in first + second)


def test_records_that_only_look_like_aggregates_are_read_whole_and_stop_nothing(
    spark: SparkSession, kinesis: Any, kinesis_endpoint: str, stream: str, tmp_path: Any
) -> None:
    magic = bytes.fromhex("f3899ac2")
    body = b"\x0a\x01k"  # a partition key table of one key, and no user record
    look_alikes = [
        magic + body + b"\x00" * 16,  # a digest that does not match: user data, as the KCL reads it
        magic + hashlib.md5(b"").digest(),  # verifies, holds nothing: a faulty producer's, counted
        magic + body + hashlib.md5(body).digest(),  # the same with a key table
    ]
    put = [kinesis.put_record(StreamName=stream, Data=d, PartitionKey="k")["SequenceNumber"] for d in look_alikes]
    put_aggregate(kinesis, stream, [("a", b"after")])
    rows = read_all(spark, kinesis_endpoint, stream, str(tmp_path / "cp"))
    got = sorted(((r.sequenceNumber, r.subSequenceNumber, bytes(r.data)) for r in rows), key=lambda t: int(t[0]))
    assert got[:3] == [(seq, 0, data) for seq, data in zip(put, look_alikes, strict=True)]
    assert [d for _, _, d in got[3:]] == [b"after"], "the records after them are read too"


def hash_key(partition_key: str) -> int:
    return int.from_bytes(hashlib.md5(partition_key.encode()).digest(), "big")


def test_an_aggregate_in_a_shard_that_does_not_hold_all_its_keys_is_skipped_whole(
    spark: SparkSession, kinesis: Any, kinesis_endpoint: str, stream: str, tmp_path: Any
) -> None:
    # A writer's aggregate caught by a split: packed for the parent, stored in a child that holds only some of its
    # keys. The KCL skips such an aggregate (the writer resends its records to the right children); so does the source.
    parent = kinesis.list_shards(StreamName=stream)["Shards"][0]["ShardId"]
    middle = 2**127
    kinesis.split_shard(StreamName=stream, ShardToSplit=parent, NewStartingHashKey=str(middle))
    kinesis.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})
    children = [s for s in kinesis.list_shards(StreamName=stream)["Shards"] if s["ShardId"] != parent]
    low_child = next(s for s in children if int(s["HashKeyRange"]["StartingHashKey"]) == 0)["ShardId"]
    keys = [f"user-{i}" for i in range(40)]
    lows = [k for k in keys if hash_key(k) < middle]
    highs = [k for k in keys if hash_key(k) >= middle]

    def put_into_low_child(users: list[tuple[str, bytes]]) -> str:
        aggregator = RecordAggregator()
        for key, data in users:
            assert aggregator.add_user_record(key, data) is None
        _, _, blob = aggregator.clear_and_get().get_contents()
        result = kinesis.put_record(StreamName=stream, Data=blob, PartitionKey="any", ExplicitHashKey="1")
        assert result["ShardId"] == low_child
        return str(result["SequenceNumber"])

    placed = [(k, f"placed-{k}".encode()) for k in lows[:3]]
    put_into_low_child(placed)
    misplaced_seq = put_into_low_child([(lows[3], b"misplaced-low"), (highs[0], b"misplaced-high")])
    after = [(lows[4], b"after")]
    put_into_low_child(after)

    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "cp")
    query = (
        spark.readStream.format("kinesis")
        .option("streamName", stream)
        .option("endpoint", kinesis_endpoint)
        .option("region", "us-east-1")
        .option("awsAccessKey", "test")
        .option("awsSecretKey", "test")
        .option("initialPosition", "trim_horizon")
        .load()
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    rows = spark.read.parquet(out).collect()
    assert sorted((r.partitionKey, bytes(r.data)) for r in rows) == sorted(placed + after)
    assert all(r.sequenceNumber != misplaced_seq for r in rows)
    skipped = [int(p["sources"][0]["metrics"].get("numMisplacedAggregatesSkipped", "0")) for p in query.recentProgress]
    assert max(skipped) == 1
