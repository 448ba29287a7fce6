"""Conformance, resharding: split, merge, UpdateShardCount and what readers see at the end of a parent."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from kinesis_conformance import MAX_HASH, Server, error_code, iterator


def read_to_end(server: Server, it: str) -> tuple[list[bytes], list[dict[str, Any]]]:
    """Reads a closed shard until NextShardIterator is null; returns its data and the ChildShards it reported."""
    data: list[bytes] = []
    for _ in range(100):
        response = server.client.get_records(ShardIterator=it)
        data += [r["Data"] for r in response["Records"]]
        if response.get("NextShardIterator") is None:
            return data, response.get("ChildShards", [])
        it = response["NextShardIterator"]
    raise AssertionError("the closed shard never ended")


def test_split(server: Server) -> None:
    name = server.new_stream(1)
    parent = server.shards(name)[0]
    server.client.put_record(StreamName=name, PartitionKey="k", Data=b"before")
    middle = MAX_HASH // 2
    server.client.split_shard(StreamName=name, ShardToSplit=parent["ShardId"], NewStartingHashKey=str(middle))
    server.wait_active(name)
    shards = {s["ShardId"]: s for s in server.shards(name)}
    parent_range = shards[parent["ShardId"]]["SequenceNumberRange"]
    if server.name == "kinesis-mock":
        # kinesis-mock closes a shard with EndingSequenceNumber 2^63 - 1, below its own starting number; on AWS it
        # is a sequence number of the shard, not below its start.
        assert parent_range["EndingSequenceNumber"] == str(2**63 - 1)
    else:
        assert int(parent_range["EndingSequenceNumber"]) >= int(parent_range["StartingSequenceNumber"])
    children = sorted(
        (s for s in shards.values() if s.get("ParentShardId") == parent["ShardId"]),
        key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]),
    )
    assert [(c["HashKeyRange"]["StartingHashKey"], c["HashKeyRange"]["EndingHashKey"]) for c in children] == [
        ("0", str(middle - 1)),
        (str(middle), str(MAX_HASH)),
    ]

    put = server.client.put_record(StreamName=name, PartitionKey="k", Data=b"after")
    assert put["ShardId"] in {c["ShardId"] for c in children}

    data, child_shards = read_to_end(server, iterator(server, name, parent["ShardId"], "TRIM_HORIZON"))
    assert data == [b"before"]
    assert {c["ShardId"] for c in child_shards} == {c["ShardId"] for c in children}
    assert all(c["ParentShards"] == [parent["ShardId"]] for c in child_shards)


def test_merge(server: Server) -> None:
    name = server.new_stream(2)
    low, high = server.shards(name)
    server.client.merge_shards(StreamName=name, ShardToMerge=low["ShardId"], AdjacentShardToMerge=high["ShardId"])
    server.wait_active(name)
    open_shards = server.shards(name, ShardFilter={"Type": "AT_LATEST"})
    assert len(open_shards) == 1
    child = open_shards[0]
    assert child["ParentShardId"] == low["ShardId"]
    assert child["AdjacentParentShardId"] == high["ShardId"]
    assert (child["HashKeyRange"]["StartingHashKey"], child["HashKeyRange"]["EndingHashKey"]) == ("0", str(MAX_HASH))
    for parent in (low, high):
        _, child_shards = read_to_end(server, iterator(server, name, parent["ShardId"], "TRIM_HORIZON"))
        assert [c["ShardId"] for c in child_shards] == [child["ShardId"]]
        assert sorted(child_shards[0]["ParentShards"]) == sorted([low["ShardId"], high["ShardId"]])


def test_update_shard_count_up_and_down(server: Server) -> None:
    name = server.new_stream(2)
    up = server.client.update_shard_count(StreamName=name, TargetShardCount=4, ScalingType="UNIFORM_SCALING")
    assert (up["CurrentShardCount"], up["TargetShardCount"]) == (2, 4)
    server.wait_active(name)
    assert_uniform_open_shards(server, name, 4)
    server.client.update_shard_count(StreamName=name, TargetShardCount=2, ScalingType="UNIFORM_SCALING")
    server.wait_active(name)
    assert_uniform_open_shards(server, name, 2)
    # Every shard but the first two descends from shards of this stream.
    every = {s["ShardId"]: s for s in server.shards(name)}
    for s in every.values():
        for parent in (s.get("ParentShardId"), s.get("AdjacentParentShardId")):
            assert parent is None or parent in every


def assert_uniform_open_shards(server: Server, name: str, count: int) -> None:
    open_shards = server.shards(name, ShardFilter={"Type": "AT_LATEST"})
    assert len(open_shards) == count
    assert server.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["OpenShardCount"] == count
    ranges = sorted(
        (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"])) for s in open_shards
    )
    assert ranges[0][0] == 0 and ranges[-1][1] == MAX_HASH
    assert all(a[1] + 1 == b[0] for a, b in zip(ranges, ranges[1:]))
    width = (MAX_HASH + 1) // count
    assert all(abs((end - start + 1) - width) <= count for start, end in ranges)


def test_split_needs_a_hash_key_inside_the_shard(server: Server) -> None:
    name = server.new_stream(1)
    parent = server.shards(name)[0]["ShardId"]
    if server.name == "kinesis-mock":
        # kinesis-mock splits at the shard's own starting hash key, leaving a child with an empty range.
        server.client.split_shard(StreamName=name, ShardToSplit=parent, NewStartingHashKey="0")
    else:
        with pytest.raises(ClientError) as e:
            server.client.split_shard(StreamName=name, ShardToSplit=parent, NewStartingHashKey="0")
        assert error_code(e) == "InvalidArgumentException"
