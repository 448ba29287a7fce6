"""Bounded memory: a backlog of 10 KiB records (64 shards x 20 MiB in a full run) drained with Trigger.AvailableNow
by a driver of its own with a 1 GiB heap, `local[2]` (driver and executor in that one JVM), default source
options, quotas off (the fastest the source may read, so the most it may hold). The driver runs in a child
process (bench/child.py) because `spark.driver.memory` only applies to a JVM that is starting.

Reported: whether the drain completed with every record, the heap at its peak (sum of the heap pools' peaks, an
upper bound that counts uncollected garbage), the most the heap kept after a collection (sampled every 0.5 s: what
the read really held), and the connector's `fetchBufferSize` metric (None when it does not report one)."""

from __future__ import annotations

from typing import Any

from bench.child import run_child
from bench.env import Settings, Simulator, load
from bench.loops import JvmSdk

RECORD_BYTES = 10 * 1024
DRIVER_MEMORY = "1g"
MIB = 1024 * 1024


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    shards, per_shard = settings.memory_shards, settings.memory_mib_per_shard
    records = shards * per_shard * MIB // RECORD_BYTES
    sdk = JvmSdk(spark, sim.endpoint)
    sim.quotas(False)
    stream = sim.new_stream(shards, "bench-memory")
    try:
        prefill = sdk.write(stream, records, RECORD_BYTES, threads=4)
        stored = sim.stream_counters(stream)
        loads = load()
        child = run_child(
            [
                "--endpoint",
                sim.endpoint,
                "--stream",
                stream,
                "--master",
                "local[2]",
                "--driver-memory",
                DRIVER_MEMORY,
                "--heap",
            ],
            settings.child_timeout_seconds,
        )
    finally:
        sdk.close()
        sim.delete(stream)
    completed = bool(child.get("completed")) and child.get("records") == records
    print(
        f"  memory {shards} x {per_shard} MiB of {RECORD_BYTES // 1024} KiB records, {DRIVER_MEMORY} heap: "
        f"{'completed' if completed else 'NOT completed'}, {child.get('records')} of {records} records, heap peak "
        f"{child.get('heapPeakMiB')} MiB, fetchBufferSize {child.get('fetchBufferSize')}",
        flush=True,
    )
    return {
        "shards": shards,
        "mibPerShard": per_shard,
        "recordBytes": RECORD_BYTES,
        "driverMemory": DRIVER_MEMORY,
        "master": "local[2]",
        "recordsInStream": records,
        "storedRecords": int(stored.get("putRecords", 0)),
        "prefillSeconds": round(prefill.seconds, 1),
        "completed": completed,
        "child": child,
        **loads,
    }
