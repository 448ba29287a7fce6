"""The Python tests' own Kinesis reads, through boto3: independent of the connector's JVM SDK."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config


def kinesis_client(endpoint: str) -> Any:
    """A client whose calls back off and retry when throttled: the tests poll streams the simulator holds to AWS's
    read quota (5 GetRecords a second per shard, shared with the query), and botocore's default two retries ran out
    once while a test polled its target stream every 0.2 s."""
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"mode": "standard", "max_attempts": 10}),
    )


def records_by_shard(client: Any, stream: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(shard, its records in sequence order) for every shard, each read from its start until a call returns none."""
    out = []
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        iterator = client.get_shard_iterator(
            StreamName=stream,
            ShardId=shard["ShardId"],
            ShardIteratorType="TRIM_HORIZON",
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
