"""A batch read (`spark.read`, from `trim_horizon` to the tip) of a backlog larger than `fetchBufferSize` (16 shards x
32 MiB of 16 KiB records in a full run, `fetchBufferSize` at its default: 1/8 of the 2 GiB driver heap), under the
simulator's read quotas, `local[2]`, into `noop`. Read twice from the same stream, side by side: one-read planning
(the plan probes each shard's end, the tasks read each record once) and the planning from before it (every shard
read to its tip on the executors, then what did not fit in the buffer read again), forced by the internal Spark conf
`spark.sparkkinesis.internal.batchPlanning=snapshots`.

Reported per planning, from the simulator's counters: GetRecords bytes served / bytes stored, and the read rate as a
fraction of the shards' aggregate read quota (2 MiB/s each) over the read (the bytes served after its first sample
with bytes, to its last byte, sampled ten times a second), beside the whole read's wall time (planning and Spark's
job included)."""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.env import Settings, Simulator, load, source_options
from bench.loops import JvmSdk
from bench.quota import READ_QUOTA_BYTES

RECORD_BYTES = 16 * 1024
MIB = 1024 * 1024
PLANNING_CONF = "spark.sparkkinesis.internal.batchPlanning"
PLANNINGS = (("oneRead", None), ("today", "snapshots"))
#: one-read planning again with a buffer that holds the whole read: what the default buffer costs the rate
WHOLE_BUFFER = "oneReadWholeBuffer"


def _served(sim: Simulator, stream: str) -> float:
    return float(sim.stream_counters(stream).get("getRecordsBytes", 0))


def read_once(
    spark: Any, sim: Simulator, stream: str, shards: int, stored: float, planning: str | None, **options: str
) -> dict:
    """One batch read of the whole stream into `noop`, measured from the simulator's counters."""
    if planning is None:
        spark.conf.unset(PLANNING_CONF)
    else:
        spark.conf.set(PLANNING_CONF, planning)
    samples: list[tuple[float, float]] = []
    done = threading.Event()

    def sample() -> None:  # when bytes were served: the read's own span, apart from Spark's start and planning
        while not done.is_set():
            samples.append((time.monotonic(), _served(sim, stream)))
            time.sleep(0.1)

    before = _served(sim, stream)
    before_counters = sim.stream_counters(stream)
    sampler = threading.Thread(target=sample, daemon=True)
    started = time.monotonic()
    sampler.start()
    try:
        df = (
            spark.read.format("kinesis")
            .options(**source_options(sim.endpoint, stream, initialPosition="trim_horizon", **options))
            .load()
        )
        df.write.format("noop").mode("overwrite").save()
    finally:
        wall = time.monotonic() - started
        done.set()
        sampler.join()
        spark.conf.unset(PLANNING_CONF)
    after_counters = sim.stream_counters(stream)
    served = _served(sim, stream) - before
    moved = [(t, b) for t, b in samples if b > before]
    first, at_first = moved[0] if moved else (started, before)
    last = next((t for t, b in samples if b >= before + served), samples[-1][0] if samples else started)
    span = max(last - first, 1e-3)
    # The bytes seen at the first sample came before the span began (a call is served at once, its quota paid
    # after): the rate counts what was served within the span.
    within = served - (at_first - before) if last > first else served
    calls = after_counters.get("getRecordsCalls", 0) - before_counters.get("getRecordsCalls", 0)
    throttled = after_counters.get("throttledGetRecordsCalls", 0) - before_counters.get("throttledGetRecordsCalls", 0)
    return {
        "servedMiB": round(served / MIB, 1),
        "servedToStored": round(served / stored, 3),
        "wallSeconds": round(wall, 1),
        "readSeconds": round(span, 1),
        "secondsToFirstByte": round(first - started, 1),
        "mibPerSecond": round(within / span / MIB, 2),
        "fractionOfByteQuota": round(within / span / (shards * READ_QUOTA_BYTES), 3),
        "wallFractionOfByteQuota": round(stored / wall / (shards * READ_QUOTA_BYTES), 3),
        "getRecordsCalls": int(calls),
        "throttledGetRecordsCalls": int(throttled),
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    shards, per_shard = settings.batch_read_shards, settings.batch_read_mib_per_shard
    records = shards * per_shard * MIB // RECORD_BYTES
    sdk = JvmSdk(spark, sim.endpoint)
    sim.quotas(False)
    stream = sim.new_stream(shards, "bench-batch")
    try:
        prefill = sdk.write(stream, records, RECORD_BYTES, threads=4, even_over=shards)
        stored = float(sim.stream_counters(stream).get("putBytes", 0))
        sim.quotas(True)
        loads = load()
        runs = {}
        whole = f"{int(stored // MIB) + 64}m"
        for name, planning, options in (
            *((n, p, {}) for n, p in PLANNINGS),
            (WHOLE_BUFFER, None, {"fetchBufferSize": whole}),
        ):
            runs[name] = read_once(spark, sim, stream, shards, stored, planning, **options)
            r = runs[name]
            print(
                f"  batch read {shards} x {per_shard} MiB ({name}): served/stored {r['servedToStored']}, "
                f"{r['fractionOfByteQuota']} of the read quota over {r['readSeconds']} s of reading, "
                f"{r['wallSeconds']} s in all",
                flush=True,
            )
    finally:
        sim.quotas(True)
        sdk.close()
        sim.delete(stream)
    return {
        "shards": shards,
        "mibPerShard": per_shard,
        "recordBytes": RECORD_BYTES,
        "records": records,
        "storedMiB": round(stored / MIB, 1),
        "fetchBufferSize": "default (1/8 of the driver heap)",
        "master": "local[2]",
        "prefillSeconds": round(prefill.seconds, 1),
        "runs": runs,
        **loads,
    }
