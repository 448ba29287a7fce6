"""The paced SDK loop's schedule and the backlog sizing, with a fake SDK: no simulator, no JVM."""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.paced import (
    MAX_BACKLOG_BYTES,
    MAX_BACKLOG_RECORDS,
    MIN_CALL_PERIOD,
    PacedLoop,
    backlog_records,
    next_call_at,
)
from bench.quota import READ_QUOTA_BYTES

MIB = 1024 * 1024


class _Response:
    def __init__(self, records: int, iterator: str | None) -> None:
        self._records, self._iterator = records, iterator

    def records(self) -> Any:
        return self

    def size(self) -> int:
        return self._records

    def nextShardIterator(self) -> str | None:  # noqa: N802 - the SDK's name
        return self._iterator


class _FakeSdk:
    """Answers every GetRecords with `records` records and notes when each shard was called."""

    def __init__(self, records: int, closed_after: int | None = None) -> None:
        self.records = records
        self.closed_after = closed_after
        self.calls: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def trim_horizon_iterator(self, stream: str, shard_id: str) -> Any:
        return shard_id

    def get_records(self, iterator: Any) -> Any:
        with self.lock:
            calls = self.calls.setdefault(iterator, [])
            calls.append(time.monotonic())
            done = self.closed_after is not None and len(calls) >= self.closed_after
        return _Response(self.records, None if done else iterator)


def _run(sdk: _FakeSdk, shards: int, bytes_per_record: int, seconds: float, cap: int = 64) -> dict[str, Any]:
    loop = PacedLoop(sdk, "s", [f"shard-{i}" for i in range(shards)], bytes_per_record, threads_cap=cap)
    loop.start()
    time.sleep(seconds)
    return loop.stop()


def test_next_call_waits_for_the_call_quota_or_the_bytes_whichever_is_longer() -> None:
    assert next_call_at(10.0, 0) == 10.0 + MIN_CALL_PERIOD
    assert next_call_at(10.0, READ_QUOTA_BYTES // 10) == 10.0 + MIN_CALL_PERIOD
    assert abs(next_call_at(10.0, 10 * MIB) - 15.0) < 1e-9  # a 10 MiB call buys 5 s at 2 MiB/s


def test_empty_calls_come_five_a_second_per_shard() -> None:
    sdk = _FakeSdk(records=0)
    counted = _run(sdk, shards=3, bytes_per_record=110, seconds=0.9)
    assert counted["threads"] == 3 and set(sdk.calls) == {"shard-0", "shard-1", "shard-2"}
    for times in sdk.calls.values():
        assert 2 <= len(times) <= 5  # at 0, 0.2, 0.4, 0.6, 0.8 s (fewer on a loaded machine, never more)
        assert min(b - a for a, b in zip(times, times[1:])) >= MIN_CALL_PERIOD - 0.01


def test_large_calls_are_spaced_by_their_bytes() -> None:
    sdk = _FakeSdk(records=10_000)  # 10,000 x 210 B = 2.0 MiB: the next call 1 s later
    _run(sdk, shards=2, bytes_per_record=210, seconds=0.7)
    assert all(len(times) == 1 for times in sdk.calls.values())


def test_a_thread_serves_several_shards_above_the_cap_and_stops_at_closed_shards() -> None:
    sdk = _FakeSdk(records=0, closed_after=2)
    counted = _run(sdk, shards=5, bytes_per_record=110, seconds=0.8, cap=2)
    assert counted["threads"] == 2 and counted["calls"] == 10
    assert all(len(times) == 2 for times in sdk.calls.values()) and len(sdk.calls) == 5


def test_backlog_covers_the_quota_and_is_capped() -> None:
    records, capped = backlog_records(1, 110, 20.0)
    assert not capped and records * 110 >= READ_QUOTA_BYTES * 21
    records, capped = backlog_records(64, 110, 20.0)
    assert capped and records == MAX_BACKLOG_RECORDS
    records, capped = backlog_records(64, 1034, 20.0)
    assert capped and records == MAX_BACKLOG_BYTES // 1034
