"""Conformance, stream lifecycle and shard listing: the same tests against kinesis-mock and the simulator."""

from __future__ import annotations

import datetime

import pytest
from botocore.exceptions import ClientError
from kinesis_conformance import MAX_HASH, Server, await_error, error_code


def test_create_describe_delete(server: Server) -> None:
    name = server.new_stream(3)
    summary = server.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
    assert summary["StreamName"] == name
    assert summary["StreamARN"].endswith(f":stream/{name}")
    assert summary["OpenShardCount"] == 3
    assert summary["RetentionPeriodHours"] == 24
    assert summary["StreamModeDetails"]["StreamMode"] == "PROVISIONED"
    assert name in server.client.list_streams()["StreamNames"]

    with pytest.raises(ClientError) as again:
        server.client.create_stream(StreamName=name, ShardCount=1)
    assert error_code(again) == "ResourceInUseException"

    server.client.delete_stream(StreamName=name)
    await_error(lambda: server.client.describe_stream_summary(StreamName=name), "ResourceNotFoundException")


def test_missing_stream_is_resource_not_found(server: Server) -> None:
    with pytest.raises(ClientError) as missing:
        server.client.describe_stream_summary(StreamName="conf-never-created")
    assert error_code(missing) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as put:
        server.client.put_record(StreamName="conf-never-created", PartitionKey="k", Data=b"x")
    assert error_code(put) == "ResourceNotFoundException"


def test_max_record_size_is_reported(server: Server) -> None:
    name = server.new_stream(1, MaxRecordSizeInKiB=2048)
    summary = server.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
    assert summary["MaxRecordSizeInKiB"] == 2048
    default = server.client.describe_stream_summary(StreamName=server.new_stream(1))["StreamDescriptionSummary"]
    if server.name == "kinesis-mock":
        # kinesis-mock reports the size only when the stream was created with one; AWS always reports it.
        assert "MaxRecordSizeInKiB" not in default
    else:
        assert default["MaxRecordSizeInKiB"] == 1024


def test_shards_cover_the_hash_key_space(server: Server) -> None:
    name = server.new_stream(5)
    shards = server.shards(name)
    assert [s["ShardId"] for s in shards] == sorted(s["ShardId"] for s in shards)
    ranges = sorted(
        (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"])) for s in shards
    )
    assert ranges[0][0] == 0 and ranges[-1][1] == MAX_HASH
    assert all(prev[1] + 1 == nxt[0] for prev, nxt in zip(ranges, ranges[1:]))
    for s in shards:
        assert s["SequenceNumberRange"]["StartingSequenceNumber"].isdigit()
        assert "EndingSequenceNumber" not in s["SequenceNumberRange"]
        assert "ParentShardId" not in s


def test_list_shards_pages(server: Server) -> None:
    name = server.new_stream(5)
    pages = [server.client.list_shards(StreamName=name, MaxResults=2)]
    while pages[-1].get("NextToken"):
        pages.append(server.client.list_shards(NextToken=pages[-1]["NextToken"], MaxResults=2))
    assert [len(p["Shards"]) for p in pages] == [2, 2, 1]
    assert [s["ShardId"] for p in pages for s in p["Shards"]] == [s["ShardId"] for s in server.shards(name)]

    with pytest.raises(ClientError) as both:
        server.client.list_shards(StreamName=name, NextToken=pages[0]["NextToken"])
    assert error_code(both) == "InvalidArgumentException"


def test_list_shards_exclusive_start(server: Server) -> None:
    name = server.new_stream(3)
    ids = [s["ShardId"] for s in server.shards(name)]
    after_first = server.client.list_shards(StreamName=name, ExclusiveStartShardId=ids[0])["Shards"]
    assert [s["ShardId"] for s in after_first] == ids[1:]


def test_shard_filters_after_a_split(server: Server) -> None:
    name = server.new_stream(2)
    created = datetime.datetime.now(datetime.timezone.utc)
    first, second = server.shards(name)
    start = int(first["HashKeyRange"]["StartingHashKey"])
    end = int(first["HashKeyRange"]["EndingHashKey"])
    server.client.split_shard(
        StreamName=name, ShardToSplit=first["ShardId"], NewStartingHashKey=str((start + end) // 2)
    )
    server.wait_active(name)
    every = server.shards(name)
    children = [s["ShardId"] for s in every if s.get("ParentShardId") == first["ShardId"]]
    assert len(children) == 2

    def ids(filter_: dict[str, object]) -> set[str]:
        return {s["ShardId"] for s in server.shards(name, ShardFilter=filter_)}

    assert ids({"Type": "AT_LATEST"}) == {second["ShardId"], *children}
    assert ids({"Type": "FROM_TRIM_HORIZON"}) == {s["ShardId"] for s in every}
    if server.name == "kinesis-mock":
        # kinesis-mock lists every shard; AWS lists the shards open at the trim horizon (here: the stream's start).
        assert ids({"Type": "AT_TRIM_HORIZON"}) == {s["ShardId"] for s in every}
    else:
        assert ids({"Type": "AT_TRIM_HORIZON"}) == {first["ShardId"], second["ShardId"]}
    assert ids({"Type": "AFTER_SHARD_ID", "ShardId": second["ShardId"]}) == set(children)
    # Children have ids after every shard before them: the source asks for these alone to find resharding.
    after_newest = server.client.list_shards(StreamName=name, ExclusiveStartShardId=second["ShardId"])["Shards"]
    assert {s["ShardId"] for s in after_newest} == set(children)
    assert ids({"Type": "AT_TIMESTAMP", "Timestamp": created}) >= {first["ShardId"], second["ShardId"]}
