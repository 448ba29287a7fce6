"""Real-time mode from PySpark with enhanced fan-out, on the simulator (kinesis-mock cannot push): rows leave while
the batch runs, and a restart in the middle of a batch loses nothing and replays only that batch.

Rows go to a Kinesis stream through the connector's sink (PySpark's `foreach` holds rows until the batch ends) and
are read back with boto3, so every row's arrival is seen outside the JVM."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from stream_reads import kinesis_client, records_by_shard

from bench.env import sql_conf

KEYS = 5


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def _put(client: Any, stream: str, prefix: str, n: int) -> list[tuple[str, str]]:
    """n records over KEYS keys, one call each so a key's records are stored in put order."""
    put = [(f"key-{i % KEYS}", f"{prefix}-{i:03d}") for i in range(n)]
    for key, data in put:
        client.put_record(StreamName=stream, PartitionKey=key, Data=data.encode())
    return put


def _copied(client: Any, stream: str) -> list[dict[str, Any]]:
    """The rows the query wrote to the target stream (one shard: in the order they were sent)."""
    return [json.loads(r["Data"]) for _, records in records_by_shard(client, stream) for r in records]


def test_enhanced_fan_out_real_time_rows_leave_inside_the_batch_and_a_restart_mid_batch_loses_nothing(
    spark: SparkSession, simulator_endpoint: str, simulator_admin: Any
) -> None:
    client = kinesis_client(simulator_endpoint)
    source, target = f"py-rtm-{uuid.uuid4().hex[:8]}", f"py-rtm-out-{uuid.uuid4().hex[:8]}"
    for name, shards in ((source, 2), (target, 1)):
        client.create_stream(StreamName=name, ShardCount=shards)
        client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    endpoint = {"endpoint": simulator_endpoint, "region": "us-east-1", "awsAccessKey": "test", "awsSecretKey": "test"}
    checkpoint = f"/tmp/py-rtm-{uuid.uuid4().hex}"
    rows = (
        spark.readStream.format("kinesis")
        .options(streamName=source, initialPosition="trim_horizon", consumerMode="efo", **endpoint)
        .load()
        .select(
            "partitionKey",
            F.to_json(F.struct("shardId", "sequenceNumber", F.col("data").cast("string").alias("text"))).alias("data"),
        )
    )

    def start(batch: str) -> StreamingQuery:
        # Spark 4.3 tracks real-time progress asynchronously by default, for the sinks it names only; the Kinesis
        # sink is at-least-once either way, so the check is overridden (docs/writing.md, "Real-time mode").
        return (
            rows.writeStream.format("kinesis")
            .options(streamName=target, **endpoint)
            .option("_asyncProgressTrackingOverrideSinkSupportCheck", "true")
            .option("checkpointLocation", checkpoint)
            .outputMode("update")
            .trigger(realTime=batch)
            .start()
        )

    # Spark allows only its own sinks in real-time mode unless told otherwise; 1 s batches keep the restart quick.
    with (
        sql_conf(spark, "spark.sql.streaming.realTimeMode.allowlistCheck", "false"),
        sql_conf(spark, "spark.sql.streaming.realTimeMode.minBatchDuration", "1000"),
    ):
        query = start("60 seconds")
        try:
            _wait(lambda: bool(query.status["isTriggerActive"]), 60, "the real-time tasks to run")
            mid = _put(client, source, "mid", 30)
            _wait(lambda: len(_copied(client, target)) >= len(mid), 30, "the records, inside the 60 s batch")
            assert not query.recentProgress, "the rows waited for the batch to end"
        finally:
            query.stop()
        cut = _copied(client, target)

        query = start("1 second")
        try:
            late = _put(client, source, "late", 30)
            _wait(
                lambda: {r["text"] for r in _copied(client, target)} >= {d for _, d in mid + late},
                60,
                "every record after the restart",
            )
        finally:
            query.stop()

    copied = _copied(client, target)
    assert {r["text"] for r in copied} == {d for _, d in mid + late}
    # The batch that was cut is read again from its start (the same records first); nothing else comes twice.
    counts = Counter((r["shardId"], r["sequenceNumber"]) for r in copied)
    repeated = {r["text"] for r in copied if counts[(r["shardId"], r["sequenceNumber"])] > 1}
    assert repeated and repeated <= {r["text"] for r in cut}, repeated
    # Per shard and key (the sink keeps each key's order, not the order across keys).
    key_of = dict((d, k) for k, d in mid + late)

    def sequences(rs: list[dict[str, Any]], shard: str, key: str) -> list[str]:
        return [r["sequenceNumber"] for r in rs if r["shardId"] == shard and key_of[r["text"]] == key]

    for shard, key in {(r["shardId"], key_of[r["text"]]) for r in cut}:
        before, after = sequences(cut, shard, key), sequences(copied[len(cut) :], shard, key)
        assert after[: len(before)] == before, f"{shard} / {key} was replayed differently: {before} then {after}"
    # Each key's first copies keep the order they were put in.
    first: list[str] = []
    for r in copied:
        if r["text"] not in first:
            first.append(r["text"])
    for key in {k for k, _ in mid + late}:
        expected = [d for k, d in mid + late if k == key]
        assert [t for t in first if t in expected] == expected, key
