"""Enhanced fan-out against polling, on the simulator with AWS's quotas: put→row latency at the default trigger
and at 100 ms (as bench/latency.py measures it, `consumerMode=efo` beside the default), and read throughput per
shard with three queries on one stream at once — each with its own consumer under EFO (2 MiB/s per shard each),
sharing the shard's 2 MiB/s when polling. A query's rate is taken between the moments it had read 10 % and 90 % of
the backlog, so its start (consumer registration, first subscription) and its tail do not count."""

from __future__ import annotations

import tempfile
import threading
import time
from typing import Any

from bench import latency
from bench.env import Settings, Simulator, load, source_options, wait_for
from bench.loops import JvmSdk

SHARDS = 2
RECORD_BYTES = 1024
READERS = 3
SHARD_QUOTA = 2 * 1024 * 1024
MODES = {"polling": {}, "efo": {"consumerMode": "efo", "requireConsumerDeregistration": "true"}}


def _latency(spark: Any, sim: Simulator, settings: Settings) -> list[dict[str, Any]]:
    sim.quotas(True)
    runs = []
    for mode, options in MODES.items():
        for name, trigger in latency.TRIGGERS.items():
            r = latency.measure(spark, sim, trigger, settings.latency_seconds, settings.latency_rate, dict(options))
            r.pop("samplesMs", None)
            runs.append({"mode": mode, "name": name, **r})
            print(f"  fan-out latency, {mode}, {name}: p50 {r['ms']['p50']} ms, p99 {r['ms']['p99']} ms", flush=True)
    return runs


def _drain(
    spark: Any, sim: Simulator, stream: str, mode: str, total_bytes: int, timeout: float
) -> list[dict[str, Any]]:
    """READERS queries at once from the stream's trim horizon; each one's byte rate between 10 % and 90 %."""
    progress: list[list[tuple[float, int]]] = [[] for _ in range(READERS)]
    started = [0.0] * READERS
    lock = threading.Lock()

    def collector(i: int) -> Any:
        def collect(batch: Any, _batch_id: int) -> None:
            got = batch.selectExpr("coalesce(sum(length(data)), 0) AS b").collect()[0]["b"]
            with lock:
                before = progress[i][-1][1] if progress[i] else 0
                progress[i].append((time.monotonic(), before + int(got)))

        return collect

    queries = []
    with tempfile.TemporaryDirectory(prefix="bench-fanout-cp-") as checkpoints:
        try:
            for i in range(READERS):
                options = source_options(sim.endpoint, stream, initialPosition="trim_horizon", **MODES[mode])
                if mode == "efo":
                    options["consumerName"] = f"bench-{i}"
                df = spark.readStream.format("kinesis").options(**options).load()
                started[i] = time.monotonic()
                queries.append(
                    df.writeStream.foreachBatch(collector(i)).option("checkpointLocation", f"{checkpoints}/{i}").start()
                )
            wait_for(
                lambda: (
                    all(p and p[-1][1] >= total_bytes for p in progress)
                    or any(q.exception() is not None for q in queries)
                ),
                timeout,
                f"{mode}: every reader to drain",
            )
            failure = next((q.exception() for q in queries if q.exception() is not None), None)
        finally:
            for q in queries:
                q.stop()
    if failure is not None:
        raise RuntimeError(f"{mode} reader failed: {failure}")
    out = []
    for series, start in zip(progress, started):
        t10 = next(t for t, b in series if b >= 0.1 * total_bytes)
        t90 = next(t for t, b in series if b >= 0.9 * total_bytes)
        b10 = next(b for t, b in series if b >= 0.1 * total_bytes)
        b90 = next(b for t, b in series if b >= 0.9 * total_bytes)
        # A reader that passed 10 % and 90 % in one batch (a small backlog) has no window: its rate from its start.
        rate = (b90 - b10) / max(t90 - t10, 1e-6) if t90 > t10 else b90 / max(t90 - start, 1e-6)
        out.append({"bytesPerSecond": round(rate), "perShardFractionOfQuota": round(rate / SHARDS / SHARD_QUOTA, 3)})
    return out


def _throughput(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sim.quotas(True)
    per_shard = int(SHARD_QUOTA * settings.fanout_seconds)
    records = SHARDS * per_shard // RECORD_BYTES
    sdk = JvmSdk(spark, sim.endpoint)
    stream = sim.new_stream(SHARDS, "bench-fanout")
    try:
        sim.quotas(False)  # the backlog is written at once; the reads below meet AWS's quotas
        sdk.write(stream, records, RECORD_BYTES, threads=4)
        sim.quotas(True)
        total = records * RECORD_BYTES
        loads = load()
        modes = {}
        for mode in MODES:
            readers = _drain(spark, sim, stream, mode, total, settings.fanout_seconds * 10 + 120)
            modes[mode] = readers
            print(
                f"  fan-out throughput, {mode}, {READERS} readers: per shard "
                f"{[r['perShardFractionOfQuota'] for r in readers]} of 2 MiB/s each",
                flush=True,
            )
    finally:
        sdk.close()
        sim.delete(stream)
    return {
        "shards": SHARDS,
        "recordBytes": RECORD_BYTES,
        "readers": READERS,
        "bytesPerShard": per_shard,
        "modes": modes,
        **loads,
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    return {"latency": _latency(spark, sim, settings), "throughput": _throughput(spark, sim, settings)}
