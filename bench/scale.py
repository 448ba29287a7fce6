"""Scale: driver-side time per trigger (StreamingQueryProgress `durationMs`: latestOffset, queryPlanning,
getBatch, triggerExecution, ...) and ListShards calls per minute (simulator counters) for a stream of 10, 100
and 1000 shards, first idle, then with light traffic."""

from __future__ import annotations

import random
import statistics
import tempfile
import threading
import time
from typing import Any

from bench.env import Settings, Simulator, load, source_options, wait_for

DURATIONS = ("latestOffset", "queryPlanning", "getBatch", "addBatch", "walCommit", "commitOffsets", "triggerExecution")
TRAFFIC_PER_SECOND = 40
#: idle triggers report progress only every `noDataProgressEventInterval` (10 s by default): 1 s shows more of them
IDLE_PROGRESS_INTERVAL = "1000"


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "max": ordered[-1],
        "n": len(ordered),
    }


def _traffic(sim: Simulator, stream: str, stop: threading.Event) -> None:
    """Light traffic: 40 records/s on random keys, so batches touch a few shards each."""
    while not stop.is_set():
        sim.client.put_records(
            StreamName=stream,
            Records=[
                {"PartitionKey": f"{random.random()}", "Data": b"x" * 100} for _ in range(TRAFFIC_PER_SECOND // 4)
            ],
        )
        stop.wait(0.25)


def _phase(sim: Simulator, stream: str, query: Any, seconds: float, with_traffic: bool) -> dict[str, Any]:
    before = sim.stream_counters(stream)["operations"]
    started_ms = time.time() * 1000
    stop = threading.Event()
    writer = threading.Thread(target=_traffic, args=(sim, stream, stop), daemon=True) if with_traffic else None
    loads = load()
    t = time.monotonic()
    if writer:
        writer.start()
    time.sleep(seconds)  # the observation window
    stop.set()
    if writer:
        writer.join(30)
    elapsed = time.monotonic() - t
    after = sim.stream_counters(stream)["operations"]
    progress = [p for p in query.recentProgress if _epoch_ms(p["timestamp"]) >= started_ms]

    def calls(op: str) -> int:
        return int(after.get(op, {}).get("calls", 0)) - int(before.get(op, {}).get("calls", 0))

    return {
        "seconds": round(elapsed, 1),
        "triggers": len(progress),
        "batches": sum(1 for p in progress if int(p["numInputRows"]) > 0),
        "rows": sum(int(p["numInputRows"]) for p in progress),
        "durationMs": {
            k: _stats([float(p["durationMs"][k]) for p in progress if k in p.get("durationMs", {})]) for k in DURATIONS
        },
        "listShardsPerMinute": round(calls("ListShards") / elapsed * 60, 1),
        "describeStreamSummaryPerMinute": round(calls("DescribeStreamSummary") / elapsed * 60, 1),
        "getShardIteratorPerMinute": round(calls("GetShardIterator") / elapsed * 60, 1),
        "getRecordsPerMinute": round(calls("GetRecords") / elapsed * 60, 1),
        **loads,
    }


def _epoch_ms(timestamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000


def measure(spark: Any, sim: Simulator, shards: int, seconds: float) -> dict[str, Any]:
    stream = sim.new_stream(shards, "bench-scale")
    reader = spark.readStream.format("kinesis").options(**source_options(sim.endpoint, stream)).load()
    with tempfile.TemporaryDirectory(prefix="bench-scale-cp-") as checkpoint:
        start = time.monotonic()
        query = reader.writeStream.format("noop").option("checkpointLocation", checkpoint).start()
        try:
            wait_for(
                lambda: str(query.status["message"]).startswith("Waiting"), 600, f"the {shards}-shard query to start"
            )
            startup = time.monotonic() - start
            idle = _phase(sim, stream, query, seconds / 2, with_traffic=False)
            traffic = _phase(sim, stream, query, seconds / 2, with_traffic=True)
            failure = query.exception()
        finally:
            query.stop()
    sim.delete(stream)
    if failure is not None:
        raise RuntimeError(f"{shards}-shard query failed: {failure}")
    return {"shards": shards, "startSeconds": round(startup, 1), "idle": idle, "traffic": traffic}


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sim.quotas(True)  # ListShards has a per-stream quota; the source must live within it
    previous = spark.conf.get("spark.sql.streaming.noDataProgressEventInterval", None)
    spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", IDLE_PROGRESS_INTERVAL)
    try:
        runs = []
        for shards in settings.scale_shards:
            result = measure(spark, sim, shards, settings.scale_seconds)
            runs.append(result)
            lo = result["traffic"]["durationMs"]["latestOffset"]
            print(
                f"  scale {shards} shards: start {result['startSeconds']} s, ListShards/min idle "
                f"{result['idle']['listShardsPerMinute']}, traffic {result['traffic']['listShardsPerMinute']}, "
                f"latestOffset median {lo['median'] if lo else '-'} ms",
                flush=True,
            )
        return {"trafficRecordsPerSecond": TRAFFIC_PER_SECOND, "runs": runs}
    finally:
        if previous is None:
            spark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")
        else:
            spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", previous)
        sim.quotas(False)
