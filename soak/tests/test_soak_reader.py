"""The soak's independent reader against the simulator: an iterator the chaos expired is renewed from the last
record read, as any Kinesis reader must (the chaos loop's `expireAll` fault expires every iterator issued so far)."""

from __future__ import annotations

import uuid
from typing import Any

from bench.env import boto3_client
from soak.reader import ShardInfo, read_shard


class ExpiringBeforeCall:
    """The boto3 client, with the simulator's admin API expiring every iterator just before its n-th GetRecords."""

    def __init__(self, client: Any, admin: Any, before_call: int) -> None:
        self._client, self._admin, self._before = client, admin, before_call
        self.get_records_calls = 0
        self.iterators_asked = 0

    def get_records(self, **kwargs: Any) -> Any:
        self.get_records_calls += 1
        if self.get_records_calls == self._before:
            self._admin.expire_iterators()
        return self._client.get_records(**kwargs)

    def get_shard_iterator(self, **kwargs: Any) -> Any:
        self.iterators_asked += 1
        return self._client.get_shard_iterator(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_an_expired_iterator_is_renewed_from_the_last_record_read(simulator_admin: Any) -> None:
    boto = boto3_client(simulator_admin.endpoint)
    stream = f"soak-reader-{uuid.uuid4().hex[:8]}"
    boto.create_stream(StreamName=stream, ShardCount=1)
    boto.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})
    shard = boto.list_shards(StreamName=stream)["Shards"][0]["ShardId"]
    for i in range(3):
        boto.put_record(StreamName=stream, PartitionKey="k", Data=f"record-{i}".encode())
    # The first call reads the three records; the second, at the tip, meets an iterator the admin API expired.
    client = ExpiringBeforeCall(boto, simulator_admin, before_call=2)
    records = read_shard(client, stream, ShardInfo(shard, (), closed=False))
    assert [r.data for r in records] == ["record-0", "record-1", "record-2"]
    assert client.iterators_asked == 2, "the expired iterator was not renewed"
