"""The release checks' own Kinesis calls, through boto3: ground truth from outside the connector under test."""

from __future__ import annotations

import uuid
from typing import Any

import boto3  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]


def kinesis_client(endpoint: str) -> Any:
    """A client that backs off when the simulator throttles it (it holds streams to AWS's read quota)."""
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"mode": "standard", "max_attempts": 10}),
    )


def new_stream(endpoint: str, prefix: str, shards: int) -> str:
    """A stream of a new name, once it is active."""
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client = kinesis_client(endpoint)
    client.create_stream(StreamName=name, ShardCount=shards)
    client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 300})
    return name


def stored(endpoint: str, stream: str) -> list[dict[str, str]]:
    """Every record of every shard, oldest first, to the tip (an empty answer with nothing behind it)."""
    client = kinesis_client(endpoint)
    records = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            answer = client.get_records(ShardIterator=iterator, Limit=10000)
            records += [
                {
                    "partitionKey": r["PartitionKey"],
                    "data": r["Data"].decode(),
                    "shardId": shard["ShardId"],
                    "sequenceNumber": r["SequenceNumber"],
                }
                for r in answer["Records"]
            ]
            if not answer["Records"] and answer.get("MillisBehindLatest", 0) == 0:
                break
            iterator = answer.get("NextShardIterator")
    return records
