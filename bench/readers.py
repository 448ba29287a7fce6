"""Read throughput: the connector draining a prefilled stream (`Trigger.AvailableNow` into Spark's `noop` sink)
against the raw SDK loop and a boto3 loop over the same shards, quotas off; and the JVM's heap peak while the
connector reads (local mode: driver and executor are one JVM)."""

from __future__ import annotations

import tempfile
import time
from typing import Any

from bench.env import Settings, Simulator, load, median, source_options
from bench.jvmstats import HeapPeaks
from bench.loops import JvmSdk, Rate, boto3_drain, compare, rate_dict


def connector_drain(spark: Any, endpoint: str, stream: str, record_bytes: int, timeout: float = 900) -> dict[str, Any]:
    """One AvailableNow query from TRIM_HORIZON to the tip into `noop`; wall time from start() to termination."""
    reader = (
        spark.readStream.format("kinesis")
        .options(**source_options(endpoint, stream, initialPosition="trim_horizon"))
        .load()
    )
    with tempfile.TemporaryDirectory(prefix="bench-read-cp-") as checkpoint:
        start = time.perf_counter()
        query = (
            reader.writeStream.format("noop")
            .trigger(availableNow=True)
            .option("checkpointLocation", checkpoint)
            .start()
        )
        if not query.awaitTermination(timeout):
            query.stop()
            raise TimeoutError(f"AvailableNow read of {stream} did not finish in {timeout:.0f} s")
        elapsed = time.perf_counter() - start
        if query.exception() is not None:
            raise RuntimeError(f"read query failed: {query.exception()}")
        progress = query.recentProgress
    records = sum(int(p["numInputRows"]) for p in progress)
    metrics = [p["sources"][0].get("metrics", {}) for p in progress if p.get("sources")]
    # Inside the batches: without the query's start and stop, what the source sustains once running.
    in_batches = sum(float(p["durationMs"].get("triggerExecution", 0)) for p in progress) / 1000
    return {
        "rate": Rate(records, elapsed, record_bytes),
        "inBatchesRecordsPerSecond": round(records / in_batches, 1) if in_batches else None,
        "batches": sum(1 for p in progress if int(p["numInputRows"]) > 0),
        "throttledCalls": sum(int(m.get("throttledCalls", 0)) for m in metrics),
        "kinesisCalls": sum(int(m.get("kinesisCalls", 0)) for m in metrics),
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    """Every (record size, shard count) shape: prefill once, then per repetition the three contenders."""
    sdk = JvmSdk(spark, sim.endpoint)
    heap = HeapPeaks(spark)
    shapes = []
    try:
        sim.quotas(False)
        for record_bytes in settings.record_sizes:
            for shards in settings.read_shards:
                stream = sim.new_stream(shards, "bench-read")
                expected = settings.read_records[record_bytes]
                prefill = sdk.write(stream, expected, record_bytes, threads=2)
                shard_ids = sim.shard_ids(stream)
                reps: dict[str, list[dict[str, Any]]] = {"connector": [], "rawSdk": [], "boto3": []}
                peaks = []
                for _ in range(settings.repetitions):
                    loads = load()
                    heap.reset()
                    result = connector_drain(spark, sim.endpoint, stream, record_bytes)
                    peaks.append(heap.peak_mib())
                    reps["connector"].append(
                        {
                            **rate_dict(result["rate"]),
                            "batches": result["batches"],
                            "inBatchesRecordsPerSecond": result["inBatchesRecordsPerSecond"],
                            "kinesisCalls": result["kinesisCalls"],
                            "throttledCalls": result["throttledCalls"],
                            **loads,
                        }
                    )
                    reps["rawSdk"].append({**rate_dict(sdk.drain(stream, shard_ids, record_bytes)), **load()})
                    reps["boto3"].append(
                        {
                            **rate_dict(
                                boto3_drain(sim.client, stream, shard_ids, record_bytes, settings.boto3_seconds)
                            ),
                            **load(),
                        }
                    )
                sim.delete(stream)
                shapes.append(_shape(record_bytes, shards, expected, prefill, reps, peaks))
                print(
                    f"  read {record_bytes} B x {shards} shard(s): connector "
                    f"{shapes[-1]['connector']['recordsPerSecond']:,.0f} rec/s, raw SDK "
                    f"{shapes[-1]['rawSdk']['recordsPerSecond']:,.0f}, boto3 "
                    f"{shapes[-1]['boto3']['recordsPerSecond']:,.0f}",
                    flush=True,
                )
    finally:
        sdk.close()
    return {
        "shapes": shapes,
        "memory": {
            "method": "java.lang.management MemoryPoolMXBean heap pools of the driver JVM via py4j, peaks reset "
            "before each connector read (local mode: driver and executor are the same JVM); the sum of "
            "per-pool peaks bounds the true peak from above",
            "maxHeapMiB": round(heap.max_heap / 1024 / 1024, 1),
            "peaks": [
                {"recordBytes": s["recordBytes"], "shards": s["shards"], "heapPeakMiB": s["heapPeakMiB"]}
                for s in shapes
            ],
        },
    }


def _shape(
    record_bytes: int,
    shards: int,
    expected: int,
    prefill: Rate,
    reps: dict[str, list[dict[str, Any]]],
    peaks: list[float],
) -> dict[str, Any]:
    return {
        "recordBytes": record_bytes,
        "shards": shards,
        "recordsInStream": expected,
        "prefill": rate_dict(prefill),
        **compare(reps),
        "connectorRecordsCounted": [r["records"] for r in reps["connector"]],
        "connectorInBatchesRecordsPerSecond": median(
            [r["inBatchesRecordsPerSecond"] or 0.0 for r in reps["connector"]]
        ),
        "heapPeakMiB": round(max(peaks), 1) if peaks else None,
    }
