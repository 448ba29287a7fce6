"""The independent reader: boto3 GetRecords over every shard of the stream, closed ones too, from TRIM_HORIZON to
the end (a closed shard's null next iterator; an open shard's empty answer at 0 ms behind, read after the producer
stopped). It shares nothing with the connector, so what it returns is what Kinesis holds, Kinesis-side duplicates
included (the same id stored twice because an answer to the producer was lost)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from bench.env import get_records_renewing
from soak.sink import Payload, Position


@dataclass(frozen=True)
class ShardInfo:
    id: str
    parents: tuple[str, ...]
    closed: bool


@dataclass(frozen=True)
class StreamRecord:
    position: Position
    partition_key: str
    data: str
    payload: Payload


def described_shards(client: Any, stream: str) -> list[dict[str, Any]]:
    """Every shard as ListShards describes it (id, parents, hash key range, sequence number range), all pages."""
    shards: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"StreamName": stream}
    while True:
        page = client.list_shards(**kwargs)
        shards.extend(page["Shards"])
        if not page.get("NextToken"):
            return shards
        kwargs = {"NextToken": page["NextToken"]}


def shard_info(s: dict[str, Any]) -> ShardInfo:
    parents = tuple(p for p in (s.get("ParentShardId"), s.get("AdjacentParentShardId")) if p)
    return ShardInfo(s["ShardId"], parents, "EndingSequenceNumber" in s.get("SequenceNumberRange", {}))


def list_shards(client: Any, stream: str) -> list[ShardInfo]:
    return [shard_info(s) for s in described_shards(client, stream)]


def lineage_order(shards: list[ShardInfo]) -> list[str]:
    """Shard ids with every parent before its children (ties by id): the order a key's records were written in,
    since a key moves from a parent to a child at a reshard. Parents no longer listed (past retention) are
    ignored."""
    known = {s.id for s in shards}
    waiting = {s.id: {p for p in s.parents if p in known} for s in shards}
    order: list[str] = []
    while waiting:
        ready = sorted(i for i, parents in waiting.items() if not parents)
        if not ready:
            raise ValueError(f"shard lineage has a cycle: {waiting}")
        for i in ready:
            order.append(i)
            del waiting[i]
        for parents in waiting.values():
            parents.difference_update(ready)
    return order


def read_shard(client: Any, stream: str, shard: ShardInfo) -> list[StreamRecord]:
    """A closed shard to its end (null next iterator); an open one to its tip."""
    iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard.id, ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    records: list[StreamRecord] = []
    empty = 0
    while iterator:
        last = records[-1].position[1] if records else None
        answer, _ = get_records_renewing(client, stream, shard.id, iterator, last)
        for r in answer["Records"]:
            data = r["Data"].decode("utf-8", errors="replace")
            records.append(
                StreamRecord((shard.id, r["SequenceNumber"], 0), r["PartitionKey"], data, Payload.parse(data))
            )
        iterator = answer.get("NextShardIterator")
        empty = 0 if answer["Records"] else empty + 1
        if not shard.closed and empty and answer.get("MillisBehindLatest", 0) == 0:
            break  # an open shard read to its tip (the producer has stopped)
        if empty > 100:
            raise RuntimeError(f"shard {shard.id} of {stream}: 100 empty answers and no end")
        time.sleep(0.2)  # 5 GetRecords a second per shard
    return records


def read_stream(client: Any, stream: str) -> tuple[list[ShardInfo], dict[str, list[StreamRecord]]]:
    """Every shard and its records in shard order."""
    shards = list_shards(client, stream)
    return shards, {s.id: read_shard(client, stream, s) for s in shards}
