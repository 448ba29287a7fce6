"""The Python tests' own Kinesis reads, through boto3: independent of the connector's JVM SDK."""

from __future__ import annotations

from typing import Any

import boto3


def kinesis_client(endpoint: str) -> Any:
    return boto3.client(
        "kinesis", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
    )


def records_by_shard(client: Any, stream: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(shard, its records in sequence order) for every shard, each read from its start until a call returns none."""
    out = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON",
        )["ShardIterator"]
        records: list[dict[str, Any]] = []
        while iterator:
            response = client.get_records(ShardIterator=iterator, Limit=10000)
            if not response["Records"]:
                break
            records.extend(response["Records"])
            iterator = response.get("NextShardIterator")
        out.append((shard, records))
    return out
