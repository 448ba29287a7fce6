"""Each AWS quota the simulator enforces, seen from a plain boto3 client with retries off."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from kinesis_conformance import error_code

if TYPE_CHECKING:
    from conftest import SimulatorAdmin


def new_stream(client: Any, shards: int = 1, **extra: Any) -> tuple[str, list[str]]:
    name = f"quota-{time.monotonic_ns()}"
    client.create_stream(StreamName=name, ShardCount=shards, **extra)
    return name, [s["ShardId"] for s in client.list_shards(StreamName=name)["Shards"]]


def shard_counters(admin: SimulatorAdmin, stream: str, shard: str) -> dict[str, int]:
    counters: dict[str, int] = admin.counters()["streams"][stream]["shards"][shard]
    return counters


def test_write_records_per_shard(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(factor=0.1)  # 100 records/s per shard, a burst of one second's worth
    name, [shard] = new_stream(simulator_client)
    response = simulator_client.put_records(
        StreamName=name, Records=[{"PartitionKey": f"k{i}", "Data": b"x"} for i in range(500)]
    )
    failed = [r for r in response["Records"] if "ErrorCode" in r]
    assert response["FailedRecordCount"] == len(failed) == 400
    assert all("SequenceNumber" in r for r in response["Records"][:100])
    assert {r["ErrorCode"] for r in failed} == {"ProvisionedThroughputExceededException"}
    assert shard in failed[0]["ErrorMessage"] and name in failed[0]["ErrorMessage"]
    counters = shard_counters(simulator_admin, name, shard)
    assert (counters["putRecords"], counters["throttledPutRecords"]) == (100, 400)
    formats = simulator_admin.counters()["requestsByFormat"]
    assert formats["json"] >= 3 and "cbor" not in formats  # boto3 speaks JSON 1.1


def test_write_bytes_per_shard(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(factor=0.1)  # 0.1 MiB/s per shard
    name, [shard] = new_stream(simulator_client)
    records = [{"PartitionKey": "k", "Data": b"x" * 10239} for _ in range(20)]  # 10 KiB each with the key
    response = simulator_client.put_records(StreamName=name, Records=records)
    assert response["FailedRecordCount"] == 10
    assert [("ErrorCode" in r) for r in response["Records"]] == [False] * 10 + [True] * 10
    assert shard_counters(simulator_admin, name, shard)["putBytes"] == 10 * 10240

    with pytest.raises(ClientError) as single:  # PutRecord fails as a whole; 50 KiB takes half a second to refill
        simulator_client.put_record(StreamName=name, PartitionKey="k", Data=b"x" * (50 * 1024))
    assert error_code(single) == "ProvisionedThroughputExceededException"


def test_read_calls_per_shard(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    name, [shard] = new_stream(simulator_client)
    it = iterator_of(simulator_client, name, shard)
    outcomes = []
    started = time.monotonic()
    for _ in range(12):
        try:
            it = simulator_client.get_records(ShardIterator=it)["NextShardIterator"]
            outcomes.append("ok")
        except ClientError as e:
            outcomes.append(e.response["Error"]["Code"])
    elapsed = time.monotonic() - started
    assert "ProvisionedThroughputExceededException" in outcomes
    # 5 calls/s: a full bucket of 5, refilled at 5 per second.
    assert outcomes.count("ok") <= 5 + int(5 * elapsed) + 1
    counters = shard_counters(simulator_admin, name, shard)
    assert counters["throttledGetRecordsCalls"] == outcomes.count("ProvisionedThroughputExceededException")
    assert counters["getRecordsCalls"] == 12


def test_read_bytes_per_shard(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(writeBytes=False, writeRecords=False, readCalls=False)
    name, [shard] = new_stream(simulator_client)
    for _ in range(4):
        simulator_client.put_record(StreamName=name, PartitionKey="k", Data=b"x" * (800 * 1024))
    # One call may take more than the 2 MiB/s (up to 10 MiB); the shard then throttles until it is paid back.
    first = simulator_client.get_records(ShardIterator=iterator_of(simulator_client, name, shard))
    assert len(first["Records"]) == 4
    with pytest.raises(ClientError) as throttled:
        simulator_client.get_records(ShardIterator=first["NextShardIterator"])
    assert error_code(throttled) == "ProvisionedThroughputExceededException"
    assert shard_counters(simulator_admin, name, shard)["getRecordsBytes"] == 4 * (800 * 1024 + 1)


def test_get_shard_iterator_per_shard(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(factor=0.2)  # 1 call/s per shard
    name, [shard] = new_stream(simulator_client)
    codes = [call_code(lambda: iterator_of(simulator_client, name, shard)) for _ in range(4)]
    assert codes[0] == "ok" and "ProvisionedThroughputExceededException" in codes
    counters = shard_counters(simulator_admin, name, shard)
    assert counters["throttledGetShardIteratorCalls"] == codes.count("ProvisionedThroughputExceededException")


def test_list_shards_per_stream(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(factor=0.1)  # 10 calls/s per stream
    name, _ = new_stream(simulator_client)
    codes = [call_code(lambda: simulator_client.list_shards(StreamName=name)) for _ in range(15)]
    assert "LimitExceededException" in codes
    counters = simulator_admin.counters()["streams"][name]["operations"]["ListShards"]
    assert counters["throttled"] == codes.count("LimitExceededException")


def test_describe_stream_summary_per_account(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(factor=0.1)  # 2 calls/s for the whole account
    name, _ = new_stream(simulator_client)
    codes = [call_code(lambda: simulator_client.describe_stream_summary(StreamName=name)) for _ in range(6)]
    assert "LimitExceededException" in codes
    assert simulator_admin.counters()["operations"]["DescribeStreamSummary"]["throttled"] == codes.count(
        "LimitExceededException"
    )


def test_quotas_switch_off(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(enabled=False)
    name, _ = new_stream(simulator_client)
    for _ in range(3):
        response = simulator_client.put_records(
            StreamName=name, Records=[{"PartitionKey": f"k{i}", "Data": b"x"} for i in range(500)]
        )
        assert response["FailedRecordCount"] == 0


def test_per_request_limits(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(enabled=False)
    name, _ = new_stream(simulator_client)
    with pytest.raises(ClientError) as records:
        simulator_client.put_records(StreamName=name, Records=[{"PartitionKey": "k", "Data": b"x"}] * 501)
    assert error_code(records) == "ValidationException"
    with pytest.raises(ClientError) as request_size:  # 11 records of just under 1 MiB: over 10 MiB per request
        simulator_client.put_records(
            StreamName=name, Records=[{"PartitionKey": "k", "Data": b"x" * (1024 * 1024 - 1)}] * 11
        )
    assert error_code(request_size) == "InvalidArgumentException"


def test_large_records_up_to_the_streams_maximum(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.quotas(enabled=False)
    name, _ = new_stream(simulator_client, MaxRecordSizeInKiB=10240)
    summary = simulator_client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
    assert summary["MaxRecordSizeInKiB"] == 10240
    simulator_client.put_record(StreamName=name, PartitionKey="k", Data=b"x" * (5 * 1024 * 1024))
    with pytest.raises(ClientError) as over:
        simulator_client.put_record(StreamName=name, PartitionKey="k", Data=b"x" * (10 * 1024 * 1024))
    assert error_code(over) == "InvalidArgumentException"


def iterator_of(client: Any, name: str, shard: str) -> str:
    it: str = client.get_shard_iterator(StreamName=name, ShardId=shard, ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    return it


def call_code(call: Any) -> str:
    try:
        call()
        return "ok"
    except ClientError as e:
        return str(e.response["Error"]["Code"])


def test_listed_shards_counted(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    name, ids = new_stream(simulator_client, shards=3)
    simulator_client.list_shards(StreamName=name, ExclusiveStartShardId=ids[0])
    simulator_client.list_shards(StreamName=name, ExclusiveStartShardId=ids[-1])
    # The listing in new_stream (3), then 2 and none.
    assert simulator_admin.counters()["streams"][name]["listedShards"] == 5
