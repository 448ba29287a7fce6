"""Enhanced fan-out through boto3: the consumer lifecycle on both servers, and SubscribeToShard's event stream
(boto3 reads it over HTTP/1.1) on the simulator. kinesis-mock never sends the `initial-response` event AWS sends
first (FIELD-NOTES), so no SDK can subscribe to it: that case is the simulator's alone."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError
from kinesis_conformance import Server, error_code

if TYPE_CHECKING:
    from conftest import SimulatorAdmin


def _stream_arn(client: Any, name: str) -> str:
    arn: str = client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]
    return arn


def _await_status(client: Any, consumer_arn: str, status: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while client.describe_stream_consumer(ConsumerARN=consumer_arn)["ConsumerDescription"]["ConsumerStatus"] != status:
        assert time.monotonic() < deadline, f"consumer not {status} within {timeout} s"
        time.sleep(0.1)  # polling a status with a deadline, as a client waiting on DescribeStreamConsumer does


def _create(client: Any, name: str) -> None:
    client.create_stream(StreamName=name, ShardCount=1)
    deadline = time.monotonic() + 15
    while client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamStatus"] != "ACTIVE":
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_consumer_lifecycle(server: Server) -> None:
    client = server.client
    name = f"efo-{time.monotonic_ns()}"
    _create(client, name)
    stream_arn = _stream_arn(client, name)
    consumer = client.register_stream_consumer(StreamARN=stream_arn, ConsumerName="app")["Consumer"]
    assert consumer["ConsumerName"] == "app" and consumer["ConsumerStatus"] == "CREATING"
    assert consumer["ConsumerARN"].startswith(f"{stream_arn}/consumer/app:")
    with pytest.raises(ClientError) as again:
        client.register_stream_consumer(StreamARN=stream_arn, ConsumerName="app")
    assert error_code(again) == "ResourceInUseException"
    _await_status(client, consumer["ConsumerARN"], "ACTIVE")
    described = client.describe_stream_consumer(StreamARN=stream_arn, ConsumerName="app")["ConsumerDescription"]
    assert described["ConsumerARN"] == consumer["ConsumerARN"] and described["StreamARN"] == stream_arn
    listed = client.list_stream_consumers(StreamARN=stream_arn)["Consumers"]
    assert [c["ConsumerName"] for c in listed] == ["app"]
    client.deregister_stream_consumer(ConsumerARN=consumer["ConsumerARN"])
    deadline = time.monotonic() + 15
    while client.list_stream_consumers(StreamARN=stream_arn)["Consumers"]:
        assert time.monotonic() < deadline, "consumer still listed 15 s after deregistration"
        time.sleep(0.1)


def test_subscribe_to_shard_events_over_http1(simulator_admin: SimulatorAdmin, simulator_client: Any) -> None:
    simulator_admin.settings(
        consumerActivationMillis=0, subscriptionHeartbeatMillis=200, subscriptionDurationMillis=3000
    )
    client = simulator_client
    name = f"efo-sub-{time.monotonic_ns()}"
    _create(client, name)
    shard = client.list_shards(StreamName=name)["Shards"][0]["ShardId"]
    put = [
        client.put_record(StreamName=name, PartitionKey="k", Data=f"r{i}".encode())["SequenceNumber"] for i in range(3)
    ]
    arn = client.register_stream_consumer(StreamARN=_stream_arn(client, name), ConsumerName="boto")["Consumer"][
        "ConsumerARN"
    ]
    _await_status(client, arn, "ACTIVE")
    response = client.subscribe_to_shard(ConsumerARN=arn, ShardId=shard, StartingPosition={"Type": "TRIM_HORIZON"})
    seen: list[str] = []
    data: list[bytes] = []
    continuation = None
    for event in response["EventStream"]:  # ends after the subscription's 3 s
        e = event["SubscribeToShardEvent"]
        seen += [r["SequenceNumber"] for r in e["Records"]]
        data += [r["Data"] for r in e["Records"]]
        continuation = e["ContinuationSequenceNumber"]
        assert e["MillisBehindLatest"] >= 0
    assert seen == put and data == [b"r0", b"r1", b"r2"]
    assert continuation is not None and int(continuation) >= int(put[-1])
