"""Each fault kind the simulator injects, seen from a plain boto3 client with retries off; and its knobs."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, ReadTimeoutError
from kinesis_conformance import error_code

if TYPE_CHECKING:
    from conftest import SimulatorAdmin


@pytest.fixture
def stream(simulator_admin: SimulatorAdmin, simulator_client: Any) -> tuple[str, str]:
    """A one-shard stream with a record in it; quotas off, so only the faults under test can fail a call."""
    simulator_admin.quotas(enabled=False)
    name = f"fault-{time.monotonic_ns()}"
    simulator_client.create_stream(StreamName=name, ShardCount=1)
    simulator_client.put_record(StreamName=name, PartitionKey="k", Data=b"record")
    shard: str = simulator_client.list_shards(StreamName=name)["Shards"][0]["ShardId"]
    return name, shard


def trim_horizon(client: Any, stream: tuple[str, str]) -> str:
    it: str = client.get_shard_iterator(StreamName=stream[0], ShardId=stream[1], ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    return it


@pytest.mark.parametrize(
    "kind, status, code", [("http500", 500, "InternalFailure"), ("http503", 503, "ServiceUnavailable")]
)
def test_server_errors(
    simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str], kind: str, status: int, code: str
) -> None:
    it = trim_horizon(simulator_client, stream)
    simulator_admin.faults({"kind": kind, "operations": ["GetRecords"], "maxCount": 2})
    for _ in range(2):
        with pytest.raises(ClientError) as e:
            simulator_client.get_records(ShardIterator=it)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
        assert error_code(e) == code
    assert simulator_client.get_records(ShardIterator=it)["Records"][0]["Data"] == b"record"
    assert simulator_admin.fault_state()["rules"][0]["fired"] == 2
    assert simulator_admin.counters()["operations"]["GetRecords"]["faults"] == 2


def test_latency(simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]) -> None:
    simulator_admin.faults({"kind": "latency", "operations": ["DescribeStreamSummary"], "latencyMillis": 400})
    started = time.monotonic()
    simulator_client.describe_stream_summary(StreamName=stream[0])
    assert time.monotonic() - started >= 0.4


def test_connection_reset(simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]) -> None:
    simulator_admin.faults({"kind": "reset", "operations": ["PutRecord"], "stream": stream[0], "maxCount": 1})
    with pytest.raises(ConnectionClosedError):
        simulator_client.put_record(StreamName=stream[0], PartitionKey="k", Data=b"lost")
    simulator_client.put_record(StreamName=stream[0], PartitionKey="k", Data=b"kept")
    data = [
        r["Data"] for r in simulator_client.get_records(ShardIterator=trim_horizon(simulator_client, stream))["Records"]
    ]
    assert data == [b"record", b"kept"]


def test_hang_until_the_client_times_out(
    simulator_admin: SimulatorAdmin, simulator_endpoint: str, stream: tuple[str, str]
) -> None:
    impatient = boto3.client(
        "kinesis",
        endpoint_url=simulator_endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=1),
    )
    simulator_admin.faults({"kind": "hang", "operations": ["ListShards"], "hangMillis": 5000, "maxCount": 1})
    with pytest.raises(ReadTimeoutError):
        impatient.list_shards(StreamName=stream[0])
    assert impatient.list_shards(StreamName=stream[0])["Shards"]


def test_internal_failure_on_chosen_records(
    simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]
) -> None:
    simulator_admin.faults({"kind": "recordFailure", "partitionKeys": ["bad"]})
    keys = ["good", "bad", "good", "bad", "good"]
    response = simulator_client.put_records(
        StreamName=stream[0], Records=[{"PartitionKey": k, "Data": k.encode()} for k in keys]
    )
    assert response["FailedRecordCount"] == 2
    assert [r.get("ErrorCode") for r in response["Records"]] == [None, "InternalFailure", None, "InternalFailure", None]
    assert simulator_admin.counters()["streams"][stream[0]]["shards"][stream[1]]["failedPutRecords"] == 2


def test_faults_are_deterministic_under_a_seed(
    simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]
) -> None:
    def failures(seed: int) -> list[bool]:
        simulator_admin.faults({"kind": "recordFailure", "probability": 0.3}, seed=seed)
        response = simulator_client.put_records(
            StreamName=stream[0], Records=[{"PartitionKey": f"k{i}", "Data": b"x"} for i in range(200)]
        )
        return ["ErrorCode" in r for r in response["Records"]]

    first = failures(7)
    assert 20 < sum(first) < 100
    assert failures(7) == first
    assert failures(8) != first


def test_forced_iterator_expiry(
    simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]
) -> None:
    simulator_admin.faults({"kind": "expireIterator", "maxCount": 1})
    it = trim_horizon(simulator_client, stream)
    with pytest.raises(ClientError) as rule:
        simulator_client.get_records(ShardIterator=it)
    assert error_code(rule) == "ExpiredIteratorException"

    simulator_admin.expire_iterators()  # every iterator issued so far
    with pytest.raises(ClientError) as admin:
        simulator_client.get_records(ShardIterator=it)
    assert error_code(admin) == "ExpiredIteratorException"
    assert simulator_client.get_records(ShardIterator=trim_horizon(simulator_client, stream))["Records"]


def test_iterator_expiry_is_configurable(
    simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]
) -> None:
    simulator_admin.settings(iteratorExpiryMillis=300)
    it = trim_horizon(simulator_client, stream)
    assert simulator_client.get_records(ShardIterator=it)["Records"]
    deadline = time.monotonic() + 10
    while True:
        try:
            simulator_client.get_records(ShardIterator=it)
        except ClientError as e:
            assert e.response["Error"]["Code"] == "ExpiredIteratorException"
            break
        assert time.monotonic() < deadline, "the iterator never expired"
        time.sleep(0.05)


def test_retention_trims_old_records(
    simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]
) -> None:
    simulator_admin.settings(retentionMillis=500)
    deadline = time.monotonic() + 10
    while simulator_client.get_records(ShardIterator=trim_horizon(simulator_client, stream))["Records"]:
        assert time.monotonic() < deadline, "the old record was never trimmed"
        time.sleep(0.05)
    simulator_client.put_record(StreamName=stream[0], PartitionKey="k", Data=b"fresh")
    data = [
        r["Data"] for r in simulator_client.get_records(ShardIterator=trim_horizon(simulator_client, stream))["Records"]
    ]
    assert data == [b"fresh"]


def test_stream_deletion(simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]) -> None:
    it = trim_horizon(simulator_client, stream)
    simulator_admin.delete_stream(stream[0])
    with pytest.raises(ClientError) as gone:
        simulator_client.get_records(ShardIterator=it)
    assert error_code(gone) == "ResourceNotFoundException"


def test_stream_deletion_triggered_by_traffic(
    simulator_admin: SimulatorAdmin, simulator_client: Any, stream: tuple[str, str]
) -> None:
    simulator_admin.faults({"kind": "deleteStream", "stream": stream[0], "operations": ["PutRecord"]})
    with pytest.raises(ClientError) as gone:
        simulator_client.put_record(StreamName=stream[0], PartitionKey="k", Data=b"x")
    assert error_code(gone) == "ResourceNotFoundException"
    assert stream[0] not in simulator_client.list_streams()["StreamNames"]
