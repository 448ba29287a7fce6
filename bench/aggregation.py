"""The sink with `aggregation=kpl` against the sink without it, side by side, on the simulator with AWS's write
quotas (1000 records/s and 1 MiB/s per shard): 100 B records on 4 shards.

- Throughput: a cached DataFrame written with `df.write` (the unaggregated write sized to about
  `aggregation_seconds` at the record quota, the aggregated one to about that long at the byte quota); user records
  stored per second over the whole write, and the fraction of PutRecords record attempts the simulator throttled,
  over the whole write and (the target, as SinkQuotaBench judges it) from 5 s after the first record stored: a
  writer starts unpaced, and its first requests meet the shards' quota at full speed.
- Latency: a rate source at 50 rows/s written by the sink (100 ms trigger) and read back by this connector's source
  (100 ms trigger) in the same session; put→row is from the moment the writer's task hands the row to the sink
  (the JVM clock, taken in the projection) to the row's arrival on the driver (`foreachBatch`), so it includes the
  aggregate's linger and the reader's polling and trigger."""

from __future__ import annotations

import json
import statistics
import tempfile
import threading
import time
from typing import Any

from bench.env import Settings, Simulator, load, source_options, wait_for
from bench.writers import KEYS, generated

SHARDS = 4
RECORD_BYTES = 100
#: records/s the quotas allow on SHARDS shards: the record quota unaggregated, roughly the byte quota aggregated
QUOTA_RATE = {"none": 1000 * SHARDS, "kpl": (1 << 20) * SHARDS // (RECORD_BYTES + 10)}
LATENCY_RATE = 50
MODES = {"none": {}, "kpl": {"aggregation": "kpl"}}


def _throughput(spark: Any, sim: Simulator, mode: str, seconds: float, warmup: float) -> dict[str, Any]:
    records = max(1000, int(QUOTA_RATE[mode] * seconds))
    df = generated(spark, records, RECORD_BYTES)
    stream = sim.new_stream(SHARDS, f"bench-agg-{mode}")
    samples: list[tuple[float, int, int]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            c = sim.stream_counters(stream)
            samples.append((time.monotonic(), int(c.get("putRecords", 0)), int(c.get("throttledPutRecords", 0))))

    sampler = threading.Thread(target=sample, daemon=True)
    try:
        loads = load()
        sampler.start()
        start = time.perf_counter()
        df.write.format("kinesis").mode("append").options(**source_options(sim.endpoint, stream, **MODES[mode])).save()
        elapsed = time.perf_counter() - start
        done.set()
        sampler.join()
        c = sim.stream_counters(stream)
        stored, throttled = int(c.get("putRecords", 0)), int(c.get("throttledPutRecords", 0))
        samples.append((time.monotonic(), stored, throttled))
        # As SinkQuotaBench does: the steady window starts `warmup` s after the first record stored.
        first = next((t for t, s, _ in samples if s > 0), samples[-1][0])
        window = [x for x in samples if x[0] >= first + warmup] or samples[-1:]
        w_stored, w_throttled = stored - window[0][1], throttled - window[0][2]
        return {
            "mode": mode,
            "userRecords": records,
            "seconds": round(elapsed, 2),
            "userRecordsPerSecond": round(records / elapsed),
            "kinesisRecordsStored": stored,
            "userRecordsPerKinesisRecord": round(records / stored, 1) if stored else None,
            "throttledPutRecords": throttled,
            "throttledFraction": round(throttled / (stored + throttled), 4) if stored + throttled else None,
            "windowSeconds": round(window[-1][0] - window[0][0], 1),
            "windowThrottledFraction": round(w_throttled / (w_stored + w_throttled), 4)
            if w_stored + w_throttled
            else None,
            "loadBefore": loads["load1"],
            "loadAfter": load()["load1"],
        }
    finally:
        done.set()
        df.unpersist()
        sim.delete(stream)


def _percentiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        only = values[0] if values else float("nan")
        return {"p50": only, "p95": only, "max": only}
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(q[49], 1), "p95": round(q[94], 1), "max": round(max(values), 1)}


def _latency(spark: Any, sim: Simulator, mode: str, seconds: float) -> dict[str, Any]:
    from pyspark.sql import functions as F

    stream = sim.new_stream(SHARDS, f"bench-agg-lat-{mode}")
    latencies: list[float] = []
    lock = threading.Lock()
    warmup_until = [float("inf")]

    def collect(batch: Any, _batch_id: int) -> None:
        rows = batch.select("data").collect()
        now = time.time() * 1000
        with lock:
            for row in rows:
                stamp = json.loads(bytes(row["data"]))["t"]
                if stamp >= warmup_until[0]:
                    latencies.append(now - stamp)

    produced = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", LATENCY_RATE)
        .load()
        .select(
            F.concat(F.lit("key-"), (F.col("value") % KEYS).cast("string")).alias("partitionKey"),
            # stamped in the writer's task as the row goes to the sink (the rate source's own
            # timestamp runs up to a second early: it plans whole seconds)
            F.to_json(
                F.struct(F.expr("cast(reflect('java.lang.System', 'currentTimeMillis') as long)").alias("t"))
            ).alias("data"),
        )
    )
    reader = spark.readStream.format("kinesis").options(**source_options(sim.endpoint, stream)).load()
    with tempfile.TemporaryDirectory(prefix="bench-agg-cp-") as checkpoints:
        consumer = (
            reader.writeStream.foreachBatch(collect)
            .trigger(processingTime="100 milliseconds")
            .option("checkpointLocation", f"{checkpoints}/read")
            .start()
        )
        producer = None
        try:
            # `latest` is pinned when the reader's first trigger plans: write only once it is past its start.
            wait_for(lambda: str(consumer.status["message"]).startswith("Waiting"), 120, "the reader to start")
            producer = (
                produced.writeStream.format("kinesis")
                .options(**source_options(sim.endpoint, stream, **MODES[mode]))
                .trigger(processingTime="100 milliseconds")
                .option("checkpointLocation", f"{checkpoints}/write")
                .start()
            )
            warmup_until[0] = time.time() * 1000 + min(3000.0, seconds * 200)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and producer.exception() is None and consumer.exception() is None:
                time.sleep(0.5)
            for q in (producer, consumer):
                if q.exception() is not None:
                    raise RuntimeError(f"{q.name or 'query'} failed: {q.exception()}")
        finally:
            for q in (producer, consumer):
                if q is not None:
                    q.stop()
    sim.delete(stream)
    with lock:
        values = list(latencies)
    return {"mode": mode, "recordsPerSecond": LATENCY_RATE, "measured": len(values), "ms": _percentiles(values)}


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sim.admin.quotas(enabled=True, factor=1.0)
    try:
        warmup = min(5.0, settings.aggregation_seconds / 3)
        throughput = [_throughput(spark, sim, mode, settings.aggregation_seconds, warmup) for mode in MODES]
        for t in throughput:
            print(
                f"  aggregation={t['mode']}: {t['userRecordsPerSecond']:,} user records/s, "
                f"{t['userRecordsPerKinesisRecord']} per Kinesis record, {t['throttledFraction']} throttled "
                f"({t['windowThrottledFraction']} after {warmup:g} s)",
                flush=True,
            )
        latency = [_latency(spark, sim, mode, settings.aggregation_latency_seconds) for mode in MODES]
        for lt in latency:
            print(
                f"  aggregation={lt['mode']} at {LATENCY_RATE} rows/s: p50 put→row {lt['ms']['p50']} ms "
                f"({lt['measured']} rows)",
                flush=True,
            )
    finally:
        sim.quotas(False)
    by_mode = {t["mode"]: t for t in throughput}
    return {
        "shards": SHARDS,
        "recordBytes": RECORD_BYTES,
        "keys": KEYS,
        "throughput": throughput,
        "speedup": round(by_mode["kpl"]["userRecordsPerSecond"] / by_mode["none"]["userRecordsPerSecond"], 2),
        "latency": latency,
    }
