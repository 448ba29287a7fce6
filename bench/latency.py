"""End-to-end latency: a boto3 writer stamps each PutRecords batch with its send time (in the payload); a
`foreachBatch` on the driver collects each micro-batch and stamps its arrival; quotas off, 2 shards, at the
default trigger and at a 100 ms processing-time trigger. Writer and reader share the machine's clock."""

from __future__ import annotations

import json
import statistics
import tempfile
import threading
import time
from typing import Any

from bench.env import Settings, Simulator, load, source_options, wait_for

SHARDS = 2
BATCH = 10
TRIGGERS = {"default": None, "processingTime=100ms": "100 milliseconds"}


def _percentiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        only = values[0] if values else float("nan")
        return {"p50": only, "p95": only, "p99": only, "max": only}
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(q[49], 1), "p95": round(q[94], 1), "p99": round(q[98], 1), "max": round(max(values), 1)}


def _writer(sim: Simulator, stream: str, rate: int, seconds: float, sent: list[int], stop: threading.Event) -> None:
    """`rate` records/s in batches of 10, paced by the clock (a late batch is sent at once, not skipped)."""
    interval = BATCH / rate
    start = time.monotonic()
    n = 0
    while not stop.is_set() and time.monotonic() - start < seconds:
        stamp = time.time()
        records = [
            {"PartitionKey": f"k{n}-{i}", "Data": json.dumps({"t": stamp, "n": n, "i": i}).encode()}
            for i in range(BATCH)
        ]
        while records:
            response = sim.client.put_records(StreamName=stream, Records=records)
            records = [r for r, res in zip(records, response["Records"]) if "ErrorCode" in res]
        sent[0] += BATCH
        n += 1
        stop.wait(max(0.0, start + n * interval - time.monotonic()))


def measure(
    spark: Any, sim: Simulator, trigger: str | None, seconds: float, rate: int, options: dict[str, str] | None = None
) -> dict[str, Any]:
    stream = sim.new_stream(SHARDS, "bench-latency")
    latencies: list[float] = []
    arrived = [0]
    lock = threading.Lock()
    warmup = min(3.0, seconds / 5)
    t0 = [0.0]

    def collect(batch: Any, _batch_id: int) -> None:
        rows = batch.select("data").collect()
        now = time.time()
        with lock:
            for row in rows:
                stamp = json.loads(bytes(row["data"]))["t"]
                arrived[0] += 1
                if stamp >= t0[0] + warmup:  # the first seconds warm the JIT and the connections up
                    latencies.append((now - stamp) * 1000)

    reader = (
        spark.readStream.format("kinesis").options(**source_options(sim.endpoint, stream, **(options or {}))).load()
    )
    with tempfile.TemporaryDirectory(prefix="bench-latency-cp-") as checkpoint:
        writer = reader.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
        if trigger is not None:
            writer = writer.trigger(processingTime=trigger)
        query = writer.start()
        sent = [0]
        stop = threading.Event()
        try:
            # `latest` is pinned when the first trigger plans; write only once the query is past its start.
            wait_for(lambda: str(query.status["message"]).startswith("Waiting"), 120, "the latency query to start")
            loads = load()
            t0[0] = time.time()
            thread = threading.Thread(target=_writer, args=(sim, stream, rate, seconds, sent, stop), daemon=True)
            thread.start()
            thread.join(seconds + 60)
            wait_for(lambda: arrived[0] >= sent[0], 120, "every latency record to arrive")
            failure = query.exception()
        finally:
            stop.set()
            query.stop()
    sim.delete(stream)
    if failure is not None:
        raise RuntimeError(f"latency query failed: {failure}")
    return {
        "trigger": trigger or "default",
        "recordsSent": sent[0],
        "recordsArrived": arrived[0],
        "measured": len(latencies),
        "ms": _percentiles(latencies),
        "samplesMs": [round(v, 1) for v in latencies],
        **loads,
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sim.quotas(False)
    runs = []
    for name, trigger in TRIGGERS.items():
        result = measure(spark, sim, trigger, settings.latency_seconds, settings.latency_rate)
        runs.append({"name": name, **result})
        print(
            f"  latency, {name} trigger: p50 {result['ms']['p50']} ms, p95 {result['ms']['p95']} ms, "
            f"p99 {result['ms']['p99']} ms",
            flush=True,
        )
    return {
        "shards": SHARDS,
        "recordsPerSecond": settings.latency_rate,
        "seconds": settings.latency_seconds,
        "runs": runs,
    }
