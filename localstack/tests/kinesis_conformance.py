"""What the conformance tests share: the servers under test, a boto3 client for them, reading helpers."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

KINESIS_MOCK = "kinesis-mock"
SIMULATOR = "simulator"


def kinesis_client(endpoint: str) -> Any:
    """boto3 without retries (each call shows what the server answered) and without client-side validation
    (the server's own checks are under test)."""
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            parameter_validation=False,
            connect_timeout=5,
            read_timeout=30,
        ),
    )


@dataclass
class Server:
    name: str
    endpoint: str
    client: Any

    def new_stream(self, shards: int, **extra: Any) -> str:
        """Creates a fresh stream and waits until it is ACTIVE."""
        name = f"conf-{uuid.uuid4().hex[:8]}"
        self.client.create_stream(StreamName=name, ShardCount=shards, **extra)
        self.wait_active(name)
        return name

    def wait_active(self, name: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            summary = self.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
            if summary["StreamStatus"] == "ACTIVE":
                return
            assert time.monotonic() < deadline, f"{name} not ACTIVE after {timeout} s"
            time.sleep(0.05)

    def shards(self, name: str, **filters: Any) -> list[dict[str, Any]]:
        shards: list[dict[str, Any]] = []
        response = self.client.list_shards(StreamName=name, **filters)
        shards += response["Shards"]
        while response.get("NextToken"):
            response = self.client.list_shards(NextToken=response["NextToken"])
            shards += response["Shards"]
        return shards


MAX_HASH = 2**128 - 1


def error_code(excinfo: pytest.ExceptionInfo[ClientError]) -> str:
    return str(excinfo.value.response["Error"]["Code"])


def iterator(server: Server, name: str, shard_id: str, kind: str, **extra: Any) -> str:
    it: str = server.client.get_shard_iterator(StreamName=name, ShardId=shard_id, ShardIteratorType=kind, **extra)[
        "ShardIterator"
    ]
    return it


def read_all(server: Server, it: str) -> list[dict[str, Any]]:
    """Reads until a response comes back empty."""
    records: list[dict[str, Any]] = []
    while True:
        response = server.client.get_records(ShardIterator=it)
        records += response["Records"]
        if not response["Records"] or response.get("NextShardIterator") is None:
            return records
        it = response["NextShardIterator"]


def owner(shards: list[dict[str, Any]], hash_key: int) -> str:
    return next(
        str(s["ShardId"])
        for s in shards
        if int(s["HashKeyRange"]["StartingHashKey"]) <= hash_key <= int(s["HashKeyRange"]["EndingHashKey"])
    )


def await_error(call: Any, code: str, timeout: float = 30) -> None:
    """Repeats a call until it fails with the given error code: deletion may take effect asynchronously."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            call()
        except ClientError as e:
            assert e.response["Error"]["Code"] == code, e.response["Error"]
            return
        assert time.monotonic() < deadline, f"still no {code} after {timeout} s"
        time.sleep(0.05)
