"""CPU per record, quotas off: the driver JVM's process CPU time (`jvmstats.ProcessCpu`) divided by the records
read, for the connector draining a backlog (`readers.connector_drain`: an AvailableNow query into `noop`) and
for the raw unpaced SDK loop (`JvmSdk.drain`) over the same stream.

The simulator runs in its own process, so the driver JVM's CPU is the reader's: in local mode it holds Spark's
driver and executor, the connector's SDK clients and the raw loop's. The connector's figure includes what its
query costs to start and stop (planning, checkpoint files), spread over the records; the raw loop's includes
py4j's server side, a few round trips per GetRecords of up to 10,000 records (per call, not per record). The
Python side of the raw loop is not JVM CPU; it is recorded beside (`pythonCpuSeconds`). A background figure
(the JVM's CPU per second with nothing running) gives an adjusted figure too.

A drain is a whole query: its start, its stop, and the JIT compilation of its generated classes, which a
fresh query pays for seconds (Spark's per-batch code is still being compiled after twenty batches). What a
query that runs for hours costs per record is measured apart (`steady_state`): a running query's CPU between
two batch completions after its first batches, with and without the JIT compilers' share. The target compares
that figure, without JIT, with the raw loop's, without JIT.

Two shapes. The connector keeps each shard's read quota even when the simulator enforces none, so on a few shards
(`cpu_shards`) it reads at the quota and its figure is mostly what a second of micro-batches costs (Spark's job,
planning and checkpoint files: about 100 ms of CPU per batch, measured) divided by the records the quota lets in;
that shape is compared with the raw loop paced to the same quota. The target is judged on the busy shape
(`cpu_busy_shards`, more for a record size that needs them: `cpu_busy_shards_by_size`): enough shards that the
quota is above what the machine reads, as when CPU matters.

What the connector does to a record that the raw loop does not (#42, bench/results/2026-11-28-copies.md). Both
decode each payload out of the CBOR answer into an array of its own (the SDK). The connector then: copies a
payload under 512 B into its record block (larger ones stay the SDK's array), with the key and sequence number;
hands the row a small payload as a copy of exactly its length, a large one as the SDK's array itself (Spark reads a
binary column as an exact-length byte[]: a slice of the block cannot be passed); and Spark copies the row into an
UnsafeRow. That last copy cannot go: Spark plans a projection to UnsafeRow over every row-based DataSource V2 scan
(DataSourceV2Strategy, unless the scan is columnar), and a reader returning UnsafeRows would add copies (getBinary
copies out of one, the projection into the next); a columnar scan is converted by ColumnarToRowExec into UnsafeRows
the same way. So a 1 KiB payload is copied once more than by the raw loop, a 100 B one three times; per record
that is tens of nanoseconds (the row and Spark's projection together 0.1-0.2 µs in a probe), against the
micro-batch's fixed cost: two Spark jobs (the snapshot of the prefetch buffers and the write), planning, and two
checkpoint files, spread over the records of one batch. In a catch-up a batch takes what the prefetch buffers
hold once they are half full (an eighth of the heap by default: about 115 MB of records with the bench's 2 GiB
driver), so at 1 KiB it brings a fifth to a sixth of the records it brings at 100 B (105,000 against 580,000 in
2026-11-27-engine), and its fixed cost weighs that much more per record: the gap left at 1 KiB."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from typing import Any

from bench.env import RECENT_PROGRESS, Settings, Simulator, load, median, source_options, sql_conf
from bench.jvmstats import JitCpu, ProcessCpu
from bench.loops import JvmSdk, Rate, quota_bytes_per_record
from bench.paced import PacedLoop
from bench.quota import READ_QUOTA_BYTES
from bench.readers import connector_drain

#: how long the idle JVM is watched for its background CPU
BACKGROUND_SECONDS = 5.0


def background_cpu(cpu: ProcessCpu, seconds: float) -> float:
    """CPU seconds per wall second the JVM spends with no query and no loop running (heartbeats, GC, timers)."""
    c0, t0 = cpu.seconds(), time.monotonic()
    time.sleep(seconds)  # an observation window
    return (cpu.seconds() - c0) / (time.monotonic() - t0)


def timed(cpu: ProcessCpu, read: Callable[[], Rate], background: float, jit: JitCpu | None = None) -> dict[str, Any]:
    """One read with the JVM's and this Python process's CPU time around it, and the JIT compilers' part."""
    jvm0, py0, jit0 = cpu.seconds(), time.process_time(), jit.seconds() if jit else 0.0
    rate = read()
    jvm, python = cpu.seconds() - jvm0, time.process_time() - py0
    compiled = (jit.seconds() - jit0) if jit else 0.0
    per_record = 1e6 / rate.records if rate.records else float("nan")
    return {
        "records": rate.records,
        "seconds": round(rate.seconds, 3),
        "jvmCpuSeconds": round(jvm, 3),
        "cpuMicrosPerRecord": round(jvm * per_record, 3),
        "jitCpuSeconds": round(compiled, 3),
        "withoutJitMicrosPerRecord": round(max(0.0, jvm - compiled) * per_record, 3),
        "backgroundAdjustedMicrosPerRecord": round(max(0.0, jvm - background * rate.seconds) * per_record, 3),
        "pythonCpuSeconds": round(python, 3),
        **load(),
    }


def _contenders(
    spark: Any, sim: Simulator, sdk: JvmSdk, stream: str, record_bytes: int
) -> dict[str, Callable[[], Rate]]:
    shard_ids = sim.shard_ids(stream)
    return {
        "connector": lambda: connector_drain(spark, sim.endpoint, stream, record_bytes)["rate"],
        "rawSdk": lambda: sdk.drain(stream, shard_ids, record_bytes),
    }


def warm_up(spark: Any, sim: Simulator, sdk: JvmSdk, records: int) -> None:
    """One unmeasured read by each contender, so neither pays for loading and JIT-compiling its code."""
    stream = sim.new_stream(1, "bench-cpu-warmup")
    try:
        sdk.write(stream, records, 100, threads=2)
        for read in _contenders(spark, sim, sdk, stream, 100).values():
            read()
    finally:
        sim.delete(stream)


def measure(
    spark: Any,
    sim: Simulator,
    sdk: JvmSdk,
    cpu: ProcessCpu,
    shards: int,
    record_bytes: int,
    records: int,
    repetitions: int,
    background: float,
    jit: JitCpu | None = None,
) -> dict[str, Any]:
    stream = sim.new_stream(shards, "bench-cpu")
    runs: dict[str, list[dict[str, Any]]] = {"connector": [], "rawSdk": []}
    try:
        sdk.write(stream, records, record_bytes, threads=2)
        contenders = _contenders(spark, sim, sdk, stream, record_bytes)
        for _ in range(repetitions):
            for name, read in contenders.items():
                runs[name].append(timed(cpu, read, background, jit))
    finally:
        sim.delete(stream)
    out: dict[str, Any] = {"recordBytes": record_bytes, "shards": shards, "recordsInStream": records}
    for name, rs in runs.items():
        out[name] = {
            "cpuMicrosPerRecord": median([r["cpuMicrosPerRecord"] for r in rs]),
            "withoutJitMicrosPerRecord": median([r["withoutJitMicrosPerRecord"] for r in rs]),
            "backgroundAdjustedMicrosPerRecord": median([r["backgroundAdjustedMicrosPerRecord"] for r in rs]),
            "runs": rs,
        }
    raw = out["rawSdk"]["cpuMicrosPerRecord"]
    out["ratioToRawSdk"] = round(out["connector"]["cpuMicrosPerRecord"] / raw, 3) if raw else None
    raw_nojit = out["rawSdk"]["withoutJitMicrosPerRecord"]
    out["ratioWithoutJit"] = round(out["connector"]["withoutJitMicrosPerRecord"] / raw_nojit, 3) if raw_nojit else None
    return out


#: how often the steady-state measure looks for a finished batch
PROGRESS_POLL_SECONDS = 0.1


def _last_batch(query: Any) -> tuple[int, int] | None:
    """(batch id, input rows) of the query's last progress, read field by field over py4j. PySpark's
    `lastProgress` has the JVM write the whole progress as JSON, the source's three offsets included (thousands of
    characters at 128 shards): ten looks a second cost the driver JVM about 10 ms of CPU a second, 0.2 µs per
    record at 1 KiB x 128 shards in a profile (2026-11-28-copies), charged to the connector."""
    progress = query._jsq.lastProgress()
    return None if progress is None else (int(progress.batchId()), int(progress.numInputRows()))


def _recent_batches(query: Any) -> list[tuple[int, int]]:
    """(batch id, input rows) of every progress the query keeps, as `_last_batch` reads them."""
    return [(int(p.batchId()), int(p.numInputRows())) for p in query._jsq.recentProgress()]


#: the paced SDK loop's steady window, after its warm-up (it reads the steady measure's backlog again)
PACED_WARMUP_SECONDS = 3.0
PACED_SECONDS = 12.0


def paced_steady(
    sdk: JvmSdk, cpu: ProcessCpu, jit: JitCpu, stream: str, shard_ids: list[str], record_bytes: int
) -> dict[str, Any]:
    """The raw SDK loop paced to the read quota like the connector (`bench.paced.PacedLoop`), from TRIM_HORIZON on
    the same backlog: its CPU per record over a window after a warm-up. The like-for-like baseline of the steady
    figure: both read at the quota, so both pay what a second costs, not only what a record costs."""
    loop = PacedLoop(sdk, stream, shard_ids, quota_bytes_per_record(record_bytes))
    loop.start()
    try:
        time.sleep(PACED_WARMUP_SECONDS)  # a warm-up window, not a wait for a condition
        r0, c0, j0, t0 = loop.records, cpu.seconds(), jit.seconds(), time.monotonic()
        time.sleep(PACED_SECONDS)  # the measurement window
        r1, c1, j1, t1 = loop.records, cpu.seconds(), jit.seconds(), time.monotonic()
    finally:
        loop.stop()
    n = max(1, r1 - r0)
    return {
        "records": r1 - r0,
        "seconds": round(t1 - t0, 3),
        "jvmCpuSeconds": round(c1 - c0, 3),
        "jitCpuSeconds": round(j1 - j0, 3),
        "cpuMicrosPerRecord": round((c1 - c0) * 1e6 / n, 3),
        "withoutJitMicrosPerRecord": round(max(0.0, (c1 - c0) - (j1 - j0)) * 1e6 / n, 3),
    }


def steady_state(
    spark: Any,
    sim: Simulator,
    sdk: JvmSdk,
    cpu: ProcessCpu,
    jit: JitCpu,
    shards: int,
    record_bytes: int,
    records: int,
    skip_batches: int,
    timeout: float = 900,
) -> dict[str, Any]:
    """A default-trigger query into `noop` over a backlog of `records`: the JVM's CPU (and its JIT compilers')
    from the end of batch `skip_batches` to the batch that reads the last record, per record of the batches in
    between. Prefetching runs ahead of the batches at both ends of the window alike.

    The unpaced raw loop drains the same backlog right before and right after the query (`rawSdkBracket`): the
    target's baseline, read from the same records within the same minute. On a shorter backlog minutes earlier
    (`measure`) the raw loop's figure moved more than the gap the target judges on this 2-core machine (1 KiB × 64:
    2.5-3.8 µs between the repetitions of one run, 4.7-7.1 in a probe later that day). The drain before the query
    also collects the writes' garbage and the one after it the query's, so neither alone is the baseline.

    The backlog is dealt evenly over the shards (`JvmSdk.write`'s `even_over`). Hashed from the writer's 1,000
    partition keys, 64 shards held from 8 to 25 keys' worth: the connector, which keeps each shard's read quota,
    spent the window's last third on the few heavy shards at 2 MiB/s each, in small batches whose fixed cost fell
    on few records, while the unpaced raw loop read them at full speed — a quota-bound tail in a target about CPU
    (1 KiB × 64, one probe: 69,000 records/s over the window with hashed keys, 110,000 dealt evenly). A stream with
    many distinct keys, as most are, is close to even."""
    stream = sim.new_stream(shards, "bench-cpu-steady")
    try:
        sdk.write(stream, records, record_bytes, threads=2, even_over=shards)
        shard_ids = sim.shard_ids(stream)
        raw_before = timed(cpu, lambda: sdk.drain(stream, shard_ids, record_bytes), 0.0, jit)
        reader = (
            spark.readStream.format("kinesis")
            .options(**source_options(sim.endpoint, stream, initialPosition="trim_horizon"))
            .load()
        )
        with tempfile.TemporaryDirectory(prefix="bench-cpu-steady-cp-") as checkpoint:
            marks = [(0, cpu.seconds(), jit.seconds(), time.monotonic())]
            query = reader.writeStream.format("noop").option("checkpointLocation", checkpoint).start()
            try:
                seen: dict[int, int] = {}
                deadline = time.monotonic() + timeout
                while sum(seen.values()) < records:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"steady-state read of {stream} did not finish in {timeout:.0f} s")
                    if query.exception() is not None:
                        raise RuntimeError(f"steady-state query failed: {query.exception()}")
                    last = _last_batch(query)
                    if last and last[0] not in seen and last[1] > 0:
                        # Batches that ended between two looks (the short ones at the end of a catch-up) are
                        # taken from the recent progress, or the window would wait for records it already read.
                        # (An idle trigger's progress repeats the next batch's id with no rows: never counted.)
                        missed = last[0] > max(seen, default=-1) + 1
                        for batch, rows in _recent_batches(query) if missed else [last]:
                            if batch not in seen and rows > 0:
                                seen[batch] = rows
                        marks.append((sum(seen.values()), cpu.seconds(), jit.seconds(), time.monotonic()))
                    time.sleep(PROGRESS_POLL_SECONDS)  # a poll interval, not a wait for a condition
            finally:
                query.stop()
        raw_after = timed(cpu, lambda: sdk.drain(stream, shard_ids, record_bytes), 0.0, jit)
        paced = paced_steady(sdk, cpu, jit, stream, shard_ids, record_bytes)
    finally:
        sim.delete(stream)
    first = marks[min(skip_batches, len(marks) - 2)]
    last = marks[-1]
    n = last[0] - first[0]
    process, compiled = last[1] - first[1], last[2] - first[2]
    return {
        "records": n,
        "batches": len(marks) - 1,
        "skippedBatches": min(skip_batches, len(marks) - 2),
        "seconds": round(last[3] - first[3], 3),
        "jvmCpuSeconds": round(process, 3),
        "jitCpuSeconds": round(compiled, 3),
        "cpuMicrosPerRecord": round(process * 1e6 / n, 3),
        "withoutJitMicrosPerRecord": round(max(0.0, process - compiled) * 1e6 / n, 3),
        "pacedSdk": paced,
        "rawSdkBracket": _bracket(raw_before, raw_after),
        **load(),
    }


def _bracket(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The raw loop's drains on either side of the connector's window, and their mean (what the target uses)."""
    keys = ("cpuMicrosPerRecord", "withoutJitMicrosPerRecord")
    return {**{k: round((before[k] + after[k]) / 2, 3) for k in keys}, "runs": [before, after]}


def _shape_plan(settings: Settings) -> list[tuple[dict[int, int], dict[int, int], bool]]:
    """(shards by record size, steady backlog by record size, judged): the quota-bound shape, and the busy one the
    target judges."""
    plan = [
        (
            {size: settings.cpu_shards for size in settings.record_sizes},
            settings.cpu_steady_records,
            settings.cpu_busy_shards <= 0,
        )
    ]
    if settings.cpu_busy_shards > 0:
        busy = {
            size: settings.cpu_busy_shards_by_size.get(size, settings.cpu_busy_shards) for size in settings.record_sizes
        }
        plan.append((busy, settings.cpu_busy_steady_records, True))
    return plan


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sdk = JvmSdk(spark, sim.endpoint)
    cpu = ProcessCpu(spark)
    jit = JitCpu(spark)
    try:
        sim.quotas(False)
        with sql_conf(spark, "spark.sql.streaming.numRecentProgressUpdates", RECENT_PROGRESS):
            warm_up(spark, sim, sdk, settings.cpu_warmup_records)
            background = background_cpu(cpu, BACKGROUND_SECONDS)
            shapes = []
            for shards, steady_records, judged in _shape_plan(settings):
                for record_bytes in settings.record_sizes:
                    if record_bytes not in steady_records:
                        continue
                    shape = measure(
                        spark,
                        sim,
                        sdk,
                        cpu,
                        shards[record_bytes],
                        record_bytes,
                        settings.cpu_records[record_bytes],
                        settings.repetitions,
                        background,
                        jit,
                    )
                    steady = steady_state(
                        spark,
                        sim,
                        sdk,
                        cpu,
                        jit,
                        shards[record_bytes],
                        record_bytes,
                        steady_records[record_bytes],
                        settings.cpu_steady_skip_batches,
                    )
                    shapes.append(_with_steady(shape, steady, judged))
                    _print(shapes[-1])
    finally:
        sdk.close()
    return {"backgroundCpuPerSecond": round(background, 4), "shapes": shapes}


def _with_steady(shape: dict[str, Any], steady: dict[str, Any], judged: bool) -> dict[str, Any]:
    """The steady figures beside the drain's, with the ratios and how close the steady read came to the quota the
    connector keeps (`fractionOfReadQuota`): near 1, what a second costs is spread over what the quota lets in."""
    shape["connectorSteady"] = steady
    shape["judged"] = judged
    raw_nojit = shape["rawSdk"]["withoutJitMicrosPerRecord"]
    shape["steadyRatioWithoutJit"] = round(steady["withoutJitMicrosPerRecord"] / raw_nojit, 3) if raw_nojit else None
    bracket_nojit = steady["rawSdkBracket"]["withoutJitMicrosPerRecord"]
    shape["steadyRatioToBracketWithoutJit"] = (
        round(steady["withoutJitMicrosPerRecord"] / bracket_nojit, 3) if bracket_nojit else None
    )
    # A paced loop that read nothing in its window has no CPU per record (seen at 1 KiB x 128 shards: 0.0, not a
    # ratio): None, and the summary says why.
    paced_nojit = steady["pacedSdk"]["withoutJitMicrosPerRecord"] if steady["pacedSdk"]["records"] > 0 else None
    shape["steadyRatioToPacedWithoutJit"] = (
        round(steady["withoutJitMicrosPerRecord"] / paced_nojit, 3) if paced_nojit else None
    )
    rate = steady["records"] / steady["seconds"] if steady["seconds"] else 0.0
    quota = shape["shards"] * READ_QUOTA_BYTES / quota_bytes_per_record(shape["recordBytes"])
    shape["steadyRecordsPerSecond"] = round(rate)
    shape["fractionOfReadQuota"] = round(rate / quota, 3)
    return shape


def _print(shape: dict[str, Any]) -> None:
    steady = shape["connectorSteady"]
    print(
        f"  CPU per record {shape['recordBytes']} B x {shape['shards']} shard(s): connector "
        f"{shape['connector']['cpuMicrosPerRecord']} us, raw SDK {shape['rawSdk']['cpuMicrosPerRecord']}"
        f" us, ratio {shape['ratioToRawSdk']} (JIT compilers' CPU left out: {shape['ratioWithoutJit']});"
        f" steady state {steady['cpuMicrosPerRecord']} us, without JIT {steady['withoutJitMicrosPerRecord']}"
        f" us, ratio {shape['steadyRatioWithoutJit']} at {shape['fractionOfReadQuota']} of the read quota; raw SDK"
        f" on the same backlog without JIT {steady['rawSdkBracket']['withoutJitMicrosPerRecord']} us, ratio"
        f" {shape['steadyRatioToBracketWithoutJit']}; paced"
        f" SDK loop without JIT {steady['pacedSdk']['withoutJitMicrosPerRecord']} us, ratio"
        f" {shape['steadyRatioToPacedWithoutJit']}"
        f"{' (the paced loop read nothing in its window)' if steady['pacedSdk']['records'] == 0 else ''}",
        flush=True,
    )
