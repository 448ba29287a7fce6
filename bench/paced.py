"""Read under the simulator's AWS quotas: the connector against a raw SDK GetRecords loop paced to the same
quota, so the ratio measures the connector's overhead, not the quota (the quotas-off read section compares a
quota-paced connector with an unpaced loop, which says little about its code).

Both readers take turns on one prefilled stream, each from TRIM_HORIZON on full quota buckets, and both are
measured by `quota.served_window`: the bytes the simulator served over a window after a warm-up (plain window as
the headline, call-aligned beside it)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from bench.env import Settings, Simulator, load, median
from bench.loops import FETCH_LIMIT, JvmSdk, quota_bytes_per_record
from bench.quota import (
    READ_QUOTA_BYTES,
    READ_QUOTA_CALLS,
    WARMUP_SECONDS,
    connector_window,
    read_counters,
    served_window,
)

MIN_CALL_PERIOD = 1.0 / READ_QUOTA_CALLS
#: one Python thread per shard up to this many; beyond it a thread serves several shards in turn
THREADS_CAP = 64
#: when the SDK's own retries of a throttled call are used up, the shard waits this long before trying again
THROTTLE_BACKOFF = 1.0
#: the backlog kept in the simulator per shape is capped (its heap holds them; bench.env gives it 6 GiB): about
#: 1.3 GB of 100 B records (~3 GB of heap with per-record overhead) or 2.5 GiB of 1 KiB records
MAX_BACKLOG_RECORDS = 12_000_000
MAX_BACKLOG_BYTES = int(2.5 * 1024**3)
#: a reader that got through this much of the backlog by the end of its window may have run dry in it
EXHAUSTED_FRACTION = 0.98


def next_call_at(started: float, served_bytes: int) -> float:
    """When a shard may be called again after a call that started at `started` and returned `served_bytes`: at
    most 5 calls a second, and bytes spaced to 2 MiB/s, both counted from the start of the previous call (the
    simulator's buckets refill continuously, so this keeps to the quota while wasting none of it)."""
    return started + max(MIN_CALL_PERIOD, served_bytes / READ_QUOTA_BYTES)


def backlog_records(shards: int, bytes_per_record: int, read_seconds: float) -> tuple[int, bool]:
    """Records to prefill so that a reader at the full quota does not run dry within `read_seconds` (warm-up +
    window) after its first call: the quota over that time, plus the bucket's one second of burst, plus the one
    call (up to 10,000 records, at most 10 MiB) that may overshoot at the end, with 5 % to spare. Returns the
    count and whether the caps cut it (then `backlogExhausted` tells whether a reader ran dry)."""
    per_shard = READ_QUOTA_BYTES * (read_seconds + 1) + min(10 * 1024 * 1024, FETCH_LIMIT * bytes_per_record)
    wanted = int(shards * per_shard * 1.05 / bytes_per_record)
    capped = min(wanted, MAX_BACKLOG_RECORDS, MAX_BACKLOG_BYTES // bytes_per_record)
    return capped, capped < wanted


class ShardReads(Protocol):
    """The two calls the paced loop makes; `JvmSdk` provides them (tests give a fake)."""

    def trim_horizon_iterator(self, stream: str, shard_id: str) -> Any: ...

    def get_records(self, iterator: Any) -> Any: ...


@dataclass
class _Shard:
    shard_id: str
    iterator: Any = None
    due: float = 0.0


class PacedLoop:
    """GetRecords (Limit 10,000) on every shard from TRIM_HORIZON, each shard paced like a well-behaved reader
    under AWS's read quota (`next_call_at`), shards read concurrently: one thread per shard up to `threads_cap`,
    each thread calling whichever of its shards is due first. Runs in the driver JVM through py4j like
    `JvmSdk.drain`; py4j's cost is per call (about ten round trips), never per record, and at 5 calls per
    second per shard it is small.

    A call's bytes are records x `bytes_per_record` (payload + partition key, what the quota counts): the writer's
    keys have a fixed width, so no record needs to be looked at from Python."""

    def __init__(
        self, sdk: ShardReads, stream: str, shard_ids: list[str], bytes_per_record: int, threads_cap: int = THREADS_CAP
    ) -> None:
        self.sdk = sdk
        self.stream = stream
        self.bytes_per_record = bytes_per_record
        count = max(1, min(threads_cap, len(shard_ids)))
        self._groups = [[_Shard(s) for s in shard_ids[i::count]] for i in range(count)]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._errors: list[str] = []
        self.calls = 0
        self.records = 0
        self.gave_up_throttled = 0

    def start(self) -> None:
        self._threads = [threading.Thread(target=self._guarded, args=(group,), daemon=True) for group in self._groups]
        for thread in self._threads:
            thread.start()

    def failure(self) -> str | None:
        with self._lock:
            return self._errors[0] if self._errors else None

    def stop(self) -> dict[str, Any]:
        """Stops every thread (a call in flight finishes first) and returns what the loop counted itself."""
        self._stop.set()
        for thread in self._threads:
            thread.join(60)
        if self.failure() is not None:
            raise RuntimeError(f"paced SDK loop failed: {self.failure()}")
        return {
            "threads": len(self._groups),
            "calls": self.calls,
            "records": self.records,
            "callsThrottledAfterSdkRetries": self.gave_up_throttled,
        }

    def _guarded(self, shards: list[_Shard]) -> None:
        try:
            self._run(shards)
        except Exception as e:  # reported by failure()/stop(); the other threads go on until stopped
            with self._lock:
                self._errors.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    def _run(self, shards: list[_Shard]) -> None:
        for shard in shards:
            shard.iterator = self.sdk.trim_horizon_iterator(self.stream, shard.shard_id)
        while not self._stop.is_set():
            open_shards = [s for s in shards if s.iterator is not None]
            if not open_shards:
                return
            shard = min(open_shards, key=lambda s: s.due)
            if self._stop.wait(max(0.0, shard.due - time.monotonic())):
                return
            self._call(shard)

    def _call(self, shard: _Shard) -> None:
        started = time.monotonic()
        try:
            response = self.sdk.get_records(shard.iterator)
        except Exception as e:  # py4j wraps the SDK's exception; only throttling is expected here
            if "ProvisionedThroughputExceeded" not in str(e):
                raise
            with self._lock:
                self.gave_up_throttled += 1
            shard.due = started + THROTTLE_BACKOFF
            return
        n = int(response.records().size())
        shard.due = next_call_at(started, n * self.bytes_per_record)
        shard.iterator = response.nextShardIterator()  # None only at the end of a closed shard
        with self._lock:
            self.calls += 1
            self.records += n


def paced_window(
    sim: Simulator, sdk: JvmSdk, stream: str, shard_ids: list[str], bytes_per_record: int, seconds: float, warmup: float
) -> dict[str, Any]:
    """The paced loop on `stream`, measured exactly like the connector (`served_window`)."""
    loop = PacedLoop(sdk, stream, shard_ids, bytes_per_record)
    before = read_counters(sim, stream)
    loop.start()
    try:
        result = served_window(sim, stream, len(shard_ids), seconds, warmup, before, loop.failure)
    finally:
        counted = loop.stop()
    return result | {"loop": counted}


def _contender(
    name: str,
    spark: Any,
    sim: Simulator,
    sdk: JvmSdk,
    stream: str,
    shard_ids: list[str],
    record_bytes: int,
    seconds: float,
    backlog: int,
) -> dict[str, Any]:
    warmup = min(WARMUP_SECONDS, seconds / 2)
    loads = load()
    if name == "connector":
        result = connector_window(spark, sim, stream, len(shard_ids), seconds, warmup, {})
    else:
        result = paced_window(sim, sdk, stream, shard_ids, quota_bytes_per_record(record_bytes), seconds, warmup)
    return result | {"backlogExhausted": result["recordsServedSinceStart"] >= EXHAUSTED_FRACTION * backlog, **loads}


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return sorted(runs, key=lambda r: r["fractionOfByteQuota"])[len(runs) // 2]


def measure_shape(
    spark: Any, sim: Simulator, sdk: JvmSdk, shards: int, record_bytes: int, settings: Settings
) -> dict[str, Any]:
    """One prefill, then per repetition both readers in turn (the order alternates), quotas on."""
    seconds = settings.paced_seconds
    bytes_per_record = quota_bytes_per_record(record_bytes)
    backlog, capped = backlog_records(shards, bytes_per_record, min(WARMUP_SECONDS, seconds / 2) + seconds)
    # A reader may leave its shards in debt (a 10 MiB call costs 5 s of quota): the next starts once it is paid.
    recovery = max(1.0, min(10 * 1024 * 1024, FETCH_LIMIT * bytes_per_record) / READ_QUOTA_BYTES)
    sim.quotas(False)
    stream = sim.new_stream(shards, "bench-paced")
    runs: dict[str, list[dict[str, Any]]] = {"connector": [], "pacedSdk": []}
    try:
        prefill_seconds = sdk.write(stream, backlog, record_bytes, threads=4).seconds
        shard_ids = sim.shard_ids(stream)
        sim.quotas(True)
        for rep in range(settings.repetitions):
            for name in ("connector", "pacedSdk") if rep % 2 == 0 else ("pacedSdk", "connector"):
                time.sleep(recovery)  # quota buckets refill: not a wait for a condition
                runs[name].append(_contender(name, spark, sim, sdk, stream, shard_ids, record_bytes, seconds, backlog))
    finally:
        sim.quotas(False)
        sim.delete(stream)
    return summarize(shards, record_bytes, backlog, capped, prefill_seconds, runs)


def summarize(
    shards: int,
    record_bytes: int,
    backlog: int,
    capped: bool,
    prefill_seconds: float,
    runs: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """Medians of both readers and the connector's ratio to the paced loop (plain windows)."""
    connector = median([r["fractionOfByteQuota"] for r in runs["connector"]])
    paced = median([r["fractionOfByteQuota"] for r in runs["pacedSdk"]])
    return {
        "shards": shards,
        "recordBytes": record_bytes,
        "backlogRecords": backlog,
        "backlogCapped": capped,
        "prefillSeconds": round(prefill_seconds, 1),
        "connector": {
            "fractionOfByteQuota": connector,
            "median": _median_run(runs["connector"]),
            "runs": runs["connector"],
        },
        "pacedSdk": {"fractionOfByteQuota": paced, "median": _median_run(runs["pacedSdk"]), "runs": runs["pacedSdk"]},
        "ratioToPacedSdk": round(connector / paced, 3) if paced else None,
        "backlogExhausted": any(r["backlogExhausted"] for rs in runs.values() for r in rs),
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sdk = JvmSdk(spark, sim.endpoint)
    try:
        shapes = []
        for record_bytes in settings.record_sizes:
            for shards in settings.paced_shards:
                shape = measure_shape(spark, sim, sdk, shards, record_bytes, settings)
                shapes.append(shape)
                print(
                    f"  paced read {record_bytes} B x {shards} shard(s): connector "
                    f"{shape['connector']['fractionOfByteQuota']:.3f} of the byte quota, paced SDK loop "
                    f"{shape['pacedSdk']['fractionOfByteQuota']:.3f}, ratio {shape['ratioToPacedSdk']}"
                    + (" (backlog ran out)" if shape["backlogExhausted"] else ""),
                    flush=True,
                )
        return {
            "quotaPerShard": {"bytesPerSecond": READ_QUOTA_BYTES, "getRecordsPerSecond": READ_QUOTA_CALLS},
            "seconds": settings.paced_seconds,
            "threadsCap": THREADS_CAP,
            "shapes": shapes,
        }
    finally:
        sdk.close()
