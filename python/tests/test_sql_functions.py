"""read_kinesis and kinesis_shards from PySpark's spark.sql, on the PySpark installed (SPEC §2 SQL)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

from stream_reads import kinesis_client

JOB = Path(__file__).resolve().parent / "sql_job.py"


def test_read_kinesis_and_kinesis_shards_from_pyspark(kinesis_endpoint: str) -> None:
    client = kinesis_client(kinesis_endpoint)
    stream = f"sql-{uuid.uuid4().hex[:8]}"
    client.create_stream(StreamName=stream, ShardCount=1)
    client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})
    for i in range(10):
        client.put_record(StreamName=stream, PartitionKey=f"k{i}", Data=f"record-{i}".encode())
    parent = client.list_shards(StreamName=stream)["Shards"][0]
    hashes = parent["HashKeyRange"]
    middle = (int(hashes["StartingHashKey"]) + int(hashes["EndingHashKey"])) // 2
    client.split_shard(StreamName=stream, ShardToSplit=parent["ShardId"], NewStartingHashKey=str(middle))
    client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})

    run = subprocess.run(
        [sys.executable, str(JOB), kinesis_endpoint, stream],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=JOB.parent,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])

    assert out["records"] == sorted(f"record-{i}" for i in range(10))
    shards = {s["shardId"]: s for s in out["shards"]}
    assert len(shards) == 3 and not shards[parent["ShardId"]]["isOpen"]
    children = [s for s in shards.values() if s["parentShardId"] == parent["ShardId"]]
    assert len(children) == 2 and all(c["isOpen"] and c["endingSequenceNumber"] is None for c in children)
    assert out["streamed"] == out["records"]
    assert "== Parsed Logical Plan ==" in out["explain"] and "sql-job-secret-marker" not in out["explain"]
    assert "Invalid value '0' for option 'maxRecordsPerFetch'" in out["error"]
