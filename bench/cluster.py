"""Re-reads across executors: a backlog (8 shards of 1 KiB records in a full run) drained with
Trigger.AvailableNow on `local-cluster[2,1,1024]` (two executor JVMs of 1 GiB, one core each, as PySpark's own
distribution runs it), default options, quotas off. A record fetched twice (a prefetch thrown away, a range read
again on another executor) costs quota on AWS, so the simulator's GetRecords bytes for the stream are compared
with the bytes stored in it (both as Kinesis counts them: data + partition key). The driver runs in a child
process (bench/child.py): the master is fixed when its JVM starts."""

from __future__ import annotations

from typing import Any

from bench.child import run_child
from bench.env import Settings, Simulator, load
from bench.loops import JvmSdk

MASTER = "local-cluster[2,1,1024]"
RECORD_BYTES = 1024


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    shards, records = settings.cluster_shards, settings.cluster_records
    if shards <= 0:
        return {"skipped": "cluster_shards is 0 in this mode"}
    sdk = JvmSdk(spark, sim.endpoint)
    sim.quotas(False)
    stream = sim.new_stream(shards, "bench-cluster")
    try:
        sdk.write(stream, records, RECORD_BYTES, threads=4)
        stored = sim.stream_counters(stream)
        loads = load()
        child = run_child(
            ["--endpoint", sim.endpoint, "--stream", stream, "--master", MASTER, "--driver-memory", "1g"],
            settings.child_timeout_seconds,
            spark_home=True,
        )
        served = sim.stream_counters(stream)
    finally:
        sdk.close()
        sim.delete(stream)
    stored_bytes, served_bytes = int(stored.get("putBytes", 0)), int(served.get("getRecordsBytes", 0))
    result = {
        "master": MASTER,
        "shards": shards,
        "recordBytes": RECORD_BYTES,
        "recordsInStream": records,
        "storedRecords": int(stored.get("putRecords", 0)),
        "storedBytes": stored_bytes,
        "servedBytes": served_bytes,
        "servedRecords": int(served.get("getRecordsRecords", 0)),
        "getRecordsCalls": int(served.get("getRecordsCalls", 0)),
        "servedToStored": round(served_bytes / stored_bytes, 4) if stored_bytes else None,
        "completed": bool(child.get("completed")) and child.get("records") == records,
        "child": child,
        **loads,
    }
    print(
        f"  {MASTER}, {shards} shards: {'completed' if result['completed'] else 'NOT completed'}, GetRecords "
        f"served {result['servedToStored']} x the bytes stored",
        flush=True,
    )
    return result
