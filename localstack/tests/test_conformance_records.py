"""Conformance, writing and reading records: the same tests against kinesis-mock and the simulator."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError
from kinesis_conformance import Server, await_error, error_code, iterator, owner, read_all


def test_records_are_routed_by_md5_of_the_partition_key(server: Server) -> None:
    name = server.new_stream(4)
    shards = server.shards(name)
    for i in range(20):
        key = f"user-{i}"
        put = server.client.put_record(StreamName=name, PartitionKey=key, Data=b"x")
        assert put["ShardId"] == owner(shards, int.from_bytes(hashlib.md5(key.encode()).digest(), "big"))
    explicit = int(shards[2]["HashKeyRange"]["StartingHashKey"])
    put = server.client.put_record(StreamName=name, PartitionKey="any", Data=b"x", ExplicitHashKey=str(explicit))
    assert put["ShardId"] == shards[2]["ShardId"]


def test_sequence_numbers_increase_per_shard(server: Server) -> None:
    name = server.new_stream(1)
    seqs = [
        server.client.put_record(StreamName=name, PartitionKey="k", Data=b"%d" % i)["SequenceNumber"] for i in range(10)
    ]
    assert all(s.isdigit() for s in seqs)
    assert [int(s) for s in seqs] == sorted({int(s) for s in seqs})


def test_put_records_answers_per_record_in_order(server: Server) -> None:
    name = server.new_stream(2)
    entries: list[dict[str, Any]] = [{"PartitionKey": f"k{i}", "Data": f"payload-{i}".encode()} for i in range(50)]
    response = server.client.put_records(StreamName=name, Records=entries)
    assert response["FailedRecordCount"] == 0
    assert len(response["Records"]) == 50
    by_shard: dict[str, list[bytes]] = {}
    for entry, result in zip(entries, response["Records"]):
        assert "ErrorCode" not in result
        by_shard.setdefault(result["ShardId"], []).append(entry["Data"])
    for shard_id, expected in by_shard.items():
        got = read_all(server, iterator(server, name, shard_id, "TRIM_HORIZON"))
        assert [r["Data"] for r in got] == expected


def test_put_records_request_limits(server: Server) -> None:
    name = server.new_stream(1)
    too_many = [{"PartitionKey": "k", "Data": b"x"}] * 501
    if server.name == "kinesis-mock":
        # kinesis-mock accepts more than the 500 records AWS allows per request.
        assert server.client.put_records(StreamName=name, Records=too_many)["FailedRecordCount"] == 0
    else:
        with pytest.raises(ClientError) as e:
            server.client.put_records(StreamName=name, Records=too_many)
        assert error_code(e) == "ValidationException"


def test_record_over_the_maximum_size(server: Server) -> None:
    name = server.new_stream(1)
    # 1 MiB of data plus a partition key is over the default maximum record size (data + key).
    over = b"x" * (1024 * 1024)
    if server.name == "kinesis-mock":
        # kinesis-mock counts only the data against the limit; AWS counts data plus partition key.
        server.client.put_record(StreamName=name, PartitionKey="k", Data=over)
    else:
        with pytest.raises(ClientError) as e:
            server.client.put_record(StreamName=name, PartitionKey="k", Data=over)
        assert error_code(e) == "InvalidArgumentException"
    with pytest.raises(ClientError) as way_over:
        server.client.put_record(StreamName=name, PartitionKey="k", Data=over + b"x" * 1024)
    assert error_code(way_over) in {"InvalidArgumentException", "ValidationException"}


def test_all_five_iterator_types(server: Server) -> None:
    name = server.new_stream(1)
    shard = server.shards(name)[0]["ShardId"]
    seqs = [
        server.client.put_record(StreamName=name, PartitionKey="k", Data=b"old-%d" % i)["SequenceNumber"]
        for i in range(3)
    ]
    latest = iterator(server, name, shard, "LATEST")
    first_three = read_all(server, iterator(server, name, shard, "TRIM_HORIZON"))
    cut = first_three[-1]["ApproximateArrivalTimestamp"]
    # The next record must arrive strictly after the cut for AT_TIMESTAMP to tell them apart.
    while time.time() <= cut.timestamp() + 0.002:
        time.sleep(0.001)
    new_seq = server.client.put_record(StreamName=name, PartitionKey="k", Data=b"new")["SequenceNumber"]

    assert [r["Data"] for r in first_three] == [b"old-0", b"old-1", b"old-2"]
    assert [r["SequenceNumber"] for r in first_three] == seqs
    assert [r["Data"] for r in read_all(server, latest)] == [b"new"]
    at = iterator(server, name, shard, "AT_SEQUENCE_NUMBER", StartingSequenceNumber=seqs[1])
    assert [r["Data"] for r in read_all(server, at)] == [b"old-1", b"old-2", b"new"]
    after = iterator(server, name, shard, "AFTER_SEQUENCE_NUMBER", StartingSequenceNumber=seqs[1])
    assert [r["Data"] for r in read_all(server, after)] == [b"old-2", b"new"]
    at_time = iterator(server, name, shard, "AT_TIMESTAMP", Timestamp=cut.timestamp() + 0.001)
    assert [r["SequenceNumber"] for r in read_all(server, at_time)] == [new_seq]


def test_get_records_limit_next_iterator_and_millis_behind(server: Server) -> None:
    name = server.new_stream(1)
    shard = server.shards(name)[0]["ShardId"]
    server.client.put_records(StreamName=name, Records=[{"PartitionKey": "k", "Data": b"%d" % i} for i in range(10)])
    first = server.client.get_records(ShardIterator=iterator(server, name, shard, "TRIM_HORIZON"), Limit=4)
    assert [r["Data"] for r in first["Records"]] == [b"0", b"1", b"2", b"3"]
    assert first["NextShardIterator"]
    rest = server.client.get_records(ShardIterator=first["NextShardIterator"])
    assert [r["Data"] for r in rest["Records"]] == [b"%d" % i for i in range(4, 10)]
    assert rest["MillisBehindLatest"] == 0
    empty = server.client.get_records(ShardIterator=rest["NextShardIterator"])
    assert empty["Records"] == [] and empty["NextShardIterator"] and empty["MillisBehindLatest"] == 0
    with pytest.raises(ClientError) as limit:
        server.client.get_records(ShardIterator=rest["NextShardIterator"], Limit=10001)
    assert error_code(limit) == "InvalidArgumentException"


def test_bad_iterators(server: Server) -> None:
    name = server.new_stream(1)
    shard = server.shards(name)[0]["ShardId"]
    with pytest.raises(ClientError) as missing_shard:
        iterator(server, name, "shardId-000000000099", "TRIM_HORIZON")
    assert error_code(missing_shard) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as garbage:
        server.client.get_records(ShardIterator="bm90LWFuLWl0ZXJhdG9y")
    if server.name == "kinesis-mock":
        # kinesis-mock fails on an iterator it cannot decode with HTTP 500; AWS answers InvalidArgumentException.
        assert garbage.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    else:
        assert error_code(garbage) == "InvalidArgumentException"

    it = iterator(server, name, shard, "TRIM_HORIZON")
    server.client.delete_stream(StreamName=name)
    await_error(lambda: server.client.get_records(ShardIterator=it), "ResourceNotFoundException")
