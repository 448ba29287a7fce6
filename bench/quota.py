"""Under the simulator's AWS quotas: the source's read rate as a fraction of the shards' aggregate read quota
(2 MiB/s and 5 GetRecords/s per shard) with the throttled-call fraction from the simulator's counters
(`served_window`, which bench/paced.py uses for its paced SDK loop too); and the sink's write-under-quota runs,
measured by the JVM program `SinkQuotaBench` and folded in here."""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.env import REPO, Settings, Simulator, load, source_options, wait_for
from bench.loops import JvmSdk

READ_QUOTA_BYTES = 2 * 1024 * 1024
READ_QUOTA_CALLS = 5
WARMUP_SECONDS = 5.0
SINK_QUOTA_CLASS = "io.github.sparkkinesis.it.bench.SinkQuotaBench"
SINK_QUOTA_SOURCE = "integration-tests/src/test/scala/io/github/sparkkinesis/it/bench/SinkQuotaBench.scala"


def read_counters(sim: Simulator, stream: str) -> dict[str, float]:
    """The stream's read counters (summed over its shards) and when they were read."""
    c = sim.stream_counters(stream)
    return {
        k: float(c.get(k, 0))
        for k in ("getRecordsBytes", "getRecordsCalls", "throttledGetRecordsCalls", "getRecordsRecords")
    } | {"t": time.monotonic()}


def _shard_bytes(sim: Simulator, stream: str) -> dict[str, float]:
    shards = sim.admin.counters().get("streams", {}).get(stream, {}).get("shards", {})
    return {shard: float(c.get("getRecordsBytes", 0)) for shard, c in shards.items()}


def call_aligned_rate(samples: list[tuple[float, dict[str, float]]]) -> tuple[float, int]:
    """Bytes per second served, summed over shards; returns the rate and how many shards needed the correction.

    One GetRecords may return up to 10 MiB and the shard then throttles until the debt is paid back, so bytes
    counted between two arbitrary instants can be off by a whole call (±33% over 15 s at 2 MiB/s). For a shard
    whose largest call is at least a tenth of its bytes in the window (and that has three calls or more), the
    rate is the bytes of every call but the last over the time from the first call to the last one: each call
    together with the wait it bought. Other shards (small calls, where the plain window is accurate and bursts
    of calls between micro-batches would mislead the correction) use the plain window."""
    total, corrected = 0.0, 0
    for shard in samples[-1][1]:
        series = [(t, b.get(shard, 0.0)) for t, b in samples]
        calls = [
            (series[i][0], series[i - 1][1], series[i][1] - series[i - 1][1])
            for i in range(1, len(series))
            if series[i][1] > series[i - 1][1]
        ]
        served = series[-1][1] - series[0][1]
        if len(calls) >= 3 and max(c[2] for c in calls) >= 0.1 * served:
            (t_first, before_first, _), (t_last, before_last, _) = calls[0], calls[-1]
            total += (before_last - before_first) / (t_last - t_first)
            corrected += 1
        else:
            total += served / (series[-1][0] - series[0][0])
    return total, corrected


def served_window(
    sim: Simulator,
    stream: str,
    shards: int,
    seconds: float,
    warmup: float,
    before: dict[str, float],
    failure: Callable[[], Any],
) -> dict[str, Any]:
    """What the simulator served to the one reader now on `stream`: from the reader's first GetRecords (counters
    past `before`, taken just before it started), a warm-up, then a window of `seconds` sampled ten times a second
    (see `call_aligned_rate`). `failure` says whether the reader broke (checked while waiting for its first call).
    Every reader measured under quota goes through here, so they are all measured the same way."""

    def started() -> bool:
        return read_counters(sim, stream)["getRecordsBytes"] > before["getRecordsBytes"] or failure() is not None

    wait_for(started, 120, "the reader's first GetRecords")
    if failure() is not None:
        raise RuntimeError(f"the reader failed before its first GetRecords: {failure()}")
    time.sleep(warmup)  # a measurement window, not a wait for a condition
    first = read_counters(sim, stream)
    samples = [(time.monotonic(), _shard_bytes(sim, stream))]
    end = samples[0][0] + seconds
    while time.monotonic() < end:  # 10 samples a second over the window: when each shard's calls landed
        time.sleep(0.1)
        samples.append((time.monotonic(), _shard_bytes(sim, stream)))
    last = read_counters(sim, stream)
    return window_figures(shards, first, last, samples) | {
        "recordsServedSinceStart": int(last["getRecordsRecords"] - before["getRecordsRecords"])
    }


def window_figures(
    shards: int, first: dict[str, float], last: dict[str, float], samples: list[tuple[float, dict[str, float]]]
) -> dict[str, Any]:
    elapsed = last["t"] - first["t"]
    delta = {k: last[k] - first[k] for k in first if k != "t"}
    calls = delta["getRecordsCalls"]
    rate, corrected = call_aligned_rate(samples)
    return {
        "seconds": round(elapsed, 2),
        # The plain window is the headline: unbiased, its error (a call at each end) evens out over repetitions;
        # the call-aligned figure is kept beside it (it reads high when a source fetches in bursts).
        "mibPerSecond": round(delta["getRecordsBytes"] / elapsed / 1024 / 1024, 3),
        "fractionOfByteQuota": round(delta["getRecordsBytes"] / elapsed / (shards * READ_QUOTA_BYTES), 3),
        "callAlignedFractionOfByteQuota": round(rate / (shards * READ_QUOTA_BYTES), 3),
        "shardsCallAligned": corrected,
        "getRecordsPerShardPerSecond": round(calls / elapsed / shards, 2),
        "fractionOfCallQuota": round(calls / elapsed / (shards * READ_QUOTA_CALLS), 3),
        "throttledFraction": round(delta["throttledGetRecordsCalls"] / calls, 4) if calls else None,
        "getRecordsCalls": int(calls),
        "throttledGetRecordsCalls": int(delta["throttledGetRecordsCalls"]),
    }


def connector_window(
    spark: Any, sim: Simulator, stream: str, shards: int, seconds: float, warmup: float, options: dict[str, str]
) -> dict[str, Any]:
    """A streaming query (default trigger, into `noop`) reading `stream` from TRIM_HORIZON, measured by
    `served_window` and stopped after it."""
    reader = (
        spark.readStream.format("kinesis")
        .options(**source_options(sim.endpoint, stream, initialPosition="trim_horizon", **options))
        .load()
    )
    with tempfile.TemporaryDirectory(prefix="bench-quota-cp-") as checkpoint:
        before = read_counters(sim, stream)
        query = reader.writeStream.format("noop").option("checkpointLocation", checkpoint).start()
        try:
            result = served_window(sim, stream, shards, seconds, warmup, before, query.exception)
            failure = query.exception()
        finally:
            query.stop()
    if failure is not None:
        raise RuntimeError(f"read query failed under quota: {failure}")
    return result


def read_under_quota(
    spark: Any, sim: Simulator, sdk: JvmSdk, shards: int, record_bytes: int, seconds: float, options: dict[str, str]
) -> dict[str, Any]:
    """A backlog larger than the quota lets through in the window, read by a streaming query (default trigger)
    with quotas on; the rate is what the simulator served (its per-shard counters, sampled through the window
    after a warm-up; see `call_aligned_rate`)."""
    warmup = min(WARMUP_SECONDS, seconds / 2)
    # Enough that the backlog outlasts the start, the warm-up and the window at the full quota.
    backlog = int(shards * READ_QUOTA_BYTES * (seconds + warmup + 5) * 1.1 / record_bytes)
    sim.quotas(False)
    stream = sim.new_stream(shards, "bench-quota")
    try:
        sdk.write(stream, backlog, record_bytes, threads=4)
        sim.quotas(True)
        loads = load()
        result = connector_window(spark, sim, stream, shards, seconds, warmup, options)
    finally:
        sim.quotas(False)
        sim.delete(stream)
    return {"shards": shards, "recordBytes": record_bytes, "backlogRecords": backlog, **result, **loads}


def run_read(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sdk = JvmSdk(spark, sim.endpoint)
    try:
        runs = []
        # The targets are about the defaults; other option sets show what a setting changes.
        for variant, options in settings.quota_variants.items():
            for record_bytes in settings.record_sizes:
                for shards in settings.quota_shards:
                    reps = [
                        read_under_quota(spark, sim, sdk, shards, record_bytes, settings.quota_seconds, options)
                        for _ in range(settings.repetitions)
                    ]
                    middle = sorted(reps, key=lambda r: r["fractionOfByteQuota"])[len(reps) // 2]  # the median one
                    runs.append({"options": variant, **middle, "repetitions": reps})
                    print(
                        f"  read under quota ({variant}), {record_bytes} B x {shards} shard(s): "
                        f"{middle['fractionOfByteQuota']:.2f} of the byte quota, {middle['throttledFraction']} "
                        "of GetRecords calls throttled",
                        flush=True,
                    )
        return {
            "quotaPerShard": {"bytesPerSecond": READ_QUOTA_BYTES, "getRecordsPerSecond": READ_QUOTA_CALLS},
            "runs": runs,
        }
    finally:
        sdk.close()


# --- write under quota: the other engineer's JVM program ----------------------------------------------------------
def sink_quota_available() -> bool:
    return (REPO / SINK_QUOTA_SOURCE).is_file()


def run_sink_quota(sbt: str, settings: Settings, out: Path) -> dict[str, Any]:
    """Runs SinkQuotaBench through sbt when its source is on this branch; otherwise says so."""
    if not sink_quota_available():
        return {"available": False, "note": "SinkQuotaBench not available (no " + SINK_QUOTA_SOURCE + ")"}
    args = f"--out {out}"
    if settings.sink_quota_seconds is not None:
        args += f" --seconds {settings.sink_quota_seconds:g}"
    if settings.sink_quota_quick:
        args += " --quick"
    command = shlex.split(sbt) + [f"integrationTests/Test/runMain {SINK_QUOTA_CLASS} {args}"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0 or not out.is_file():
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        raise RuntimeError(f"SinkQuotaBench failed (exit {done.returncode}):\n{tail}")
    return fold_sink_quota(json.loads(out.read_text())) | {"seconds": round(time.monotonic() - started, 1)}


def fold_sink_quota(data: dict[str, Any]) -> dict[str, Any]:
    """SinkQuotaBench's JSON as it is, plus one summary row per run (the trace stays for the plot)."""
    rows = [
        {
            k: run.get(k)
            for k in (
                "mode",
                "shards",
                "tasks",
                "keys",
                "recordBytes",
                "quotaRecordsPerSecond",
                "achievableRecordsPerSecond",
                "deliveredRecordsPerSecond",
                "fractionOfAchievable",
                "throttledFraction",
                "lost",
                "duplicates",
            )
        }
        for run in data.get("runs", [])
    ]
    return {"available": True, "summary": rows, "runs": data.get("runs", [])}
