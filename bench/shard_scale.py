"""Up to 10,000 shards on one driver (#42): how each of the driver's costs grows with the shard count. For each
shape (1000, 2500, 5000 and 10,000 shards in a full run), one default query on `local[2]`, quotas on, then one
with a fixed trigger interval:

* start: from `start()` to the first "Waiting" status (listing, the pinned `latest`, the first snapshot), the
  median of three starts on the stream (two queries started and stopped once every shard answered, then the
  measured one); and from `start()` until every shard's feed had its first answer (GetShardIterator and
  GetRecords): the first snapshot waits for those at most a second, so past the shard count the machine answers
  in a second the start stops growing, and this figure shows the cost under that bound;
* idle, `shard_scale_idle_after` seconds after the start (the idle budget has spread the shards' polls, the JIT
  has compiled the idle path): the median `durationMs.triggerExecution` of the no-data triggers (progress asked
  every second) and the driver JVM's CPU (driver and executor in one process) as a fraction of one core;
* light traffic on a tenth of the shards (every tenth one, by ExplicitHashKey), a record a second each, spread
  over the second (bench/many_shards.py's traffic): p50/p95 put -> row of the records sent after the first
  `shard_scale_traffic_warmup` seconds; each batch's checkpoint writes (`walCommit`: the offset log's file,
  `commitOffsets`: the commit log's), the offset log file's size (the newest `offsets/<n>` in the checkpoint);
* the driver heap after a full collection (System.gc()) at the end of the traffic, the query still running;
* idle again, 10 s after the traffic's last record arrived, for half the idle window: each trigger now starts from
  an offset Spark read back from its offset log, not from the pinned start;
* in each window, the CPU per trigger of the query's stream thread and of the task threads, from /proc: what a
  trigger costs, which its wall time (stretched by whatever else wants the two cores) does not say;
* the same traffic once more, on a second query with a fixed 1 s trigger interval started after the first one
  stopped (`fixedTrigger`): with Spark's default trigger a trigger starts as soon as the last one ended, so a
  slower machine gives fewer, larger batches and every per-trigger figure moves with it (two full runs of the
  same code 40 minutes apart: 231 and 145 batches at 10,000 shards); at a fixed interval each trigger covers a
  second of records whatever the machine gives, so its `latestOffset` and CPU measure the connector's work.

Progress is read from the JVM's own objects (py4j), not `recentProgress`: at 10,000 shards each progress carries
three offset JSONs of about a megabyte, which Python would parse a hundred times per read. The query keeps Spark's
default 100 progress entries (the bench session keeps 10,000), so the heap is what a user's driver holds.

Each cost's growth is reported as log-log slopes (1 is linear; the target is "linear or better"): the steepest
between neighbouring shapes, which a knee at the big end shows, and from the smallest shape to the largest. A full
run takes about 26 minutes (26.2 measured; the idle window is shorter from 5000 shards; creating a 10,000-shard
stream takes ~5 s); `--quick` runs 200 and 1000 shards in about 4 minutes. A shape above 10,000 shards
(`--shard-scale-shards 10000,20000`) is several streams of at most 10,000, read by one query (`streamName`
takes a comma-separated list): Kinesis streams reach 10,000-20,000 shards, and a query may read several."""

from __future__ import annotations

import math
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.env import Settings, Simulator, load, sql_conf, wait_for
from bench.jvmstats import CallQueue, HeapPeaks, JitCpu, ProcessCpu, ThreadCpu
from bench.latency import _percentiles
from bench.many_shards import _Arrivals, _cpu_fraction, _traffic, start_query
from bench.scale import IDLE_PROGRESS_INTERVAL, _epoch_ms, _stats

#: a record a second on every ACTIVE_EVERY-th shard
ACTIVE_EVERY = 10
#: Spark's default number of progress entries a query keeps: the heap figure is a default driver's
DEFAULT_PROGRESS_RETENTION = "100"
#: after the traffic's last record arrived, before the second idle window
SETTLE_SECONDS = 10.0
DURATIONS = ("triggerExecution", "latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets")
#: the threads a trigger's work runs on (Linux keeps 15 characters of a Java thread's name): the query's stream
#: thread (offsets, planning, Spark's logs and commits) and the task threads (snapshot tasks, the batch's reads)
TRIGGER_THREADS = {"stream": "stream executio", "tasks": "Executor task l"}
#: starts timed per shape (the median is the figure): one start at 10,000 shards took 2.3 to 8.6 s in one JVM
START_SAMPLES = 3
#: the traffic's p50 put -> row is also kept per this many seconds of send time
P50_SLICE_SECONDS = 5
#: the second query's trigger interval: longer than a trigger with traffic takes at 10,000 shards (median 0.2 to
#: 0.5 s with the default trigger), so triggers do not run back to back
FIXED_TRIGGER = "1 second"
#: from the second query's start to its traffic: its shards' first polls are answered, their idle backoff begins
FIXED_SETTLE_SECONDS = 20.0


class _Progress:
    """The query's progress as the JVM holds it, read field by field over py4j and kept here by batch id and
    timestamp (the query keeps only the last 100): timestamp (epoch ms), rows, the durations above."""

    def __init__(self, query: Any) -> None:
        self._jsq = query._jsq
        self._seen: dict[tuple[int, str], dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with self._reading:  # the poller and a window's end both read
            for p in self._jsq.recentProgress():
                key = (int(p.batchId()), str(p.timestamp()))
                if key in self._seen:
                    continue
                durations = p.durationMs()
                entry = {
                    "timestamp": _epoch_ms(key[1]),
                    "rows": int(p.numInputRows()),
                    **{k: int(durations.get(k)) for k in DURATIONS if durations.containsKey(k)},
                }
                with self._lock:
                    self._seen[key] = entry

    def _poll(self) -> None:
        while not self._stop.wait(5.0):  # 100 entries last 100 s of idle triggers reported every second
            self._read()

    def between(self, start_ms: float, end_ms: float) -> list[dict[str, Any]]:
        self._read()
        with self._lock:
            return sorted(
                (e for e in self._seen.values() if start_ms <= e["timestamp"] < end_ms), key=lambda e: e["timestamp"]
            )

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


class _FirstAnswers:
    """When every one of a starting query's `shards` feeds had its first answer (GetShardIterator and GetRecords),
    from the executor's count of first answers (this JVM's Prefetcher, which only the measured query uses): what a
    new query's first snapshot waits for, up to its bound (a second), so the start stops growing with the shards
    once it binds; this figure is the cost under that bound. Sampled every 20 ms from before the start (one counter
    read: counting the unanswered feeds walked 10,000 of them each time, 12 % of the JVM's samples in a probe), for
    at most `timeout` s."""

    def __init__(self, spark: Any, shards: int, timeout: float = 120.0) -> None:
        self._prefetcher = spark._jvm.io.github.sparkkinesis.source.executor.Prefetcher
        self._shards, self._timeout = shards, timeout
        self._before = int(self._prefetcher.firstAnswerCount())
        self.done_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        end = time.monotonic() + self._timeout
        while not self._stop.is_set() and time.monotonic() < end:
            if int(self._prefetcher.firstAnswerCount()) - self._before >= self._shards:
                self.done_at = time.monotonic()
                return
            self._stop.wait(0.02)

    def seconds_after(self, start: float) -> float | None:
        """Waits for the sampler; None when it timed out."""
        self._thread.join(self._timeout + 5)
        return None if self.done_at is None else self.done_at - start

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def _durations(entries: list[dict[str, Any]], key: str) -> dict[str, float] | None:
    return _stats([float(e[key]) for e in entries if key in e])


def _offset_file_bytes(checkpoint: str) -> int | None:
    """The newest offset log entry's size: Spark's header lines and the source's JSON."""
    files = [p for p in Path(checkpoint, "offsets").iterdir() if p.name.isdigit()]
    return max(files, key=lambda p: int(p.name)).stat().st_size if files else None


def _calls(sim: Simulator, streams: list[str]) -> dict[str, int]:
    ops = [sim.stream_counters(s)["operations"] for s in streams]
    return {op: sum(int(o.get(op, {}).get("calls", 0)) for o in ops) for op in ("GetRecords", "ListShards")}


def stream_sizes(shards: int, per_stream: int) -> list[int]:
    """A shape's streams: one, or as few as hold `per_stream` shards each, of (nearly) equal size."""
    n = math.ceil(shards / per_stream)
    return [shards // n + (1 if i < shards % n else 0) for i in range(n)]


def measure(
    spark: Any, sim: Simulator, shards: int, windows: dict[str, float], per_stream: int = 10000
) -> dict[str, Any]:
    """One shape: idle from `idleAfter` s after the start for `idleSeconds`, then traffic for `trafficSeconds`
    of which the first `trafficWarmup` are not measured. A shape of more than `per_stream` shards is several
    streams read by one query."""
    cpu, jit, heap = ProcessCpu(spark), JitCpu(spark), HeapPeaks(spark)
    threads = ThreadCpu(spark, TRIGGER_THREADS)
    queue = CallQueue(spark)
    t, streams = time.monotonic(), []
    arrivals = _Arrivals()
    try:
        for size in stream_sizes(shards, per_stream):
            streams.append(sim.new_stream(size, "bench-shardscale"))
        created = time.monotonic() - t
        stream = ",".join(streams)  # the query reads them all: `streamName` takes a comma-separated list
        busy = {s: [x["HashKeyRange"]["StartingHashKey"] for x in sim.shards(s)][::ACTIVE_EVERY] for s in streams}
        starts, answered = [], []
        for _ in range(START_SAMPLES - 1):  # queries started, stopped once every shard answered, each on its own
            with tempfile.TemporaryDirectory(prefix="bench-shardscale-start-") as checkpoint:
                first = _FirstAnswers(spark, shards)
                try:
                    probe, begun, took = start_query(spark, sim, stream, _Arrivals(), checkpoint, shards)
                    answered.append(first.seconds_after(begun))
                    probe.stop()
                finally:
                    first.stop()
                starts.append(took)
        with tempfile.TemporaryDirectory(prefix="bench-shardscale-cp-") as checkpoint:
            first = _FirstAnswers(spark, shards)
            try:
                query, start, startup = start_query(spark, sim, stream, arrivals, checkpoint, shards)
                answered.append(first.seconds_after(start))
            finally:
                first.stop()
            starts.append(startup)
            progress = _Progress(query)
            try:
                time.sleep(max(0.0, windows["idleAfter"] - (time.monotonic() - start)))  # the stream stays silent
                idle = _idle_phase(sim, streams, progress, cpu, jit, threads, queue, windows["idleSeconds"], start)
                traffic = _traffic_phase(sim, busy, arrivals, progress, cpu, jit, threads, queue, windows)
                traffic["offsetFileBytes"] = _offset_file_bytes(checkpoint)
                live = heap.live_mib()
                # Idle again once the traffic stops: now each trigger starts from an offset of the offset log, not
                # from the pinned start (what a query that has read something costs while its stream is quiet).
                time.sleep(min(SETTLE_SECONDS, windows["idleSeconds"]))
                idle_after = _idle_phase(
                    sim, streams, progress, cpu, jit, threads, queue, windows["idleSeconds"] / 2, start
                )
                failure = query.exception()
            finally:
                progress.stop()
                query.stop()
        if failure is None:
            fixed = _fixed_trigger_phase(spark, sim, busy, cpu, jit, threads, queue, windows, shards)
    finally:
        threads.stop()
        for s in streams:
            sim.delete(s)
    if failure is not None:
        raise RuntimeError(f"{shards}-shard query failed: {failure}")
    return {
        "shards": shards,
        "streams": len(streams),
        "activeShards": sum(len(keys) for keys in busy.values()),
        "createStreamSeconds": round(created, 1),
        "startSeconds": round(statistics.median(starts), 1),
        "startSamples": [round(x, 1) for x in starts],
        # each start's time until every shard had its first answer (None: not seen within the sampler's time)
        "firstAnswersSeconds": _median_or_none(answered),
        "firstAnswersSamples": [None if x is None else round(x, 2) for x in answered],
        "idle": idle,
        "traffic": traffic,
        "idleAfterTraffic": idle_after,
        "fixedTrigger": fixed,
        "heapAfterFullGcMiB": round(live, 1),
        "heapMaxMiB": round(heap.max_heap / 2**20),
    }


def _idle_phase(
    sim: Simulator,
    streams: list[str],
    progress: _Progress,
    cpu: ProcessCpu,
    jit: JitCpu,
    threads: ThreadCpu,
    queue: CallQueue,
    seconds: float,
    start: float,
) -> dict[str, Any]:
    """No records for `seconds`: the no-data triggers' time, the JVM's CPU, the calls the stream received."""
    calls0, loads, wall0, threads0 = _calls(sim, streams), load(), time.time() * 1000, threads.seconds()
    queue0 = queue.totals()
    window = _cpu_fraction(cpu, jit, seconds)
    threads1, wall1 = threads.seconds(), time.time() * 1000
    entries = progress.between(wall0, wall1)
    calls1 = _calls(sim, streams)
    wall = window["wallSeconds"]
    return {
        "secondsAfterStart": round(time.monotonic() - start - wall, 1),
        "triggers": len(entries),
        "batches": sum(1 for e in entries if e["rows"] > 0),
        "triggerExecutionMs": _durations(entries, "triggerExecution"),
        "latestOffsetMs": _durations(entries, "latestOffset"),
        "cpu": window,
        "triggerCpuMs": _per_trigger(threads0, threads1, len(entries)),
        "getRecordsPerSecond": round((calls1["GetRecords"] - calls0["GetRecords"]) / wall, 1),
        "listShardsPerMinute": round((calls1["ListShards"] - calls0["ListShards"]) / wall * 60, 1),
        "callQueue": CallQueue.between(queue0, queue.totals(), wall),
        **loads,
    }


def _traffic_phase(
    sim: Simulator,
    busy: dict[str, list[str]],
    arrivals: _Arrivals,
    progress: _Progress,
    cpu: ProcessCpu,
    jit: JitCpu,
    threads: ThreadCpu,
    queue: CallQueue,
    windows: dict[str, float],
) -> dict[str, Any]:
    seconds, warmup = windows["trafficSeconds"], windows["trafficWarmup"]
    sent = {s: [0] for s in busy}  # one writer per stream
    stop = threading.Event()
    loads = load()
    writers = [
        threading.Thread(target=_traffic, args=(sim, s, keys, seconds, sent[s], stop), daemon=True)
        for s, keys in busy.items()
    ]
    begun = time.time()
    for writer in writers:
        writer.start()
    time.sleep(warmup)  # the first batches over every shard, the JIT compiling what records bring
    measured_from, threads0, calls0 = time.time(), threads.seconds(), _calls(sim, list(busy))
    queue0 = queue.totals()
    window = _cpu_fraction(cpu, jit, max(1.0, seconds - warmup))
    for writer in writers:
        writer.join(60)
    stop.set()
    total = sum(n[0] for n in sent.values())
    try:  # a record that never arrives is reported as missing, not waited for forever
        wait_for(lambda: arrivals.arrived >= total, 120, "every traffic record to arrive")
    except TimeoutError:
        pass
    threads1, measured_to, calls1 = threads.seconds(), time.time(), _calls(sim, list(busy))
    queue1 = queue.totals()
    entries = progress.between(measured_from * 1000, measured_to * 1000)
    batches = [e for e in entries if e["rows"] > 0]
    return {
        "recordsSent": total,
        "recordsArrived": arrivals.arrived,
        "recordsMissing": max(0, total - arrivals.arrived),
        "secondsMeasured": round(time.time() - measured_from, 1),
        "secondsWarmup": round(measured_from - begun, 1),
        "ms": _percentiles(arrivals.sent_between(measured_from, time.time())),
        # p50 by the second the records were sent, from the traffic's start: whether the put -> row time falls
        # as the busy shards are found (an idle shard is polled every 20 s at 10,000) or stays (the machine)
        "p50MsBySecondSent": _p50_by_slice(arrivals, begun, measured_to),
        "batches": len(batches),
        "rowsPerBatch": round(sum(e["rows"] for e in batches) / len(batches), 1) if batches else None,
        "cpu": window,
        "triggerCpuMs": _per_trigger(threads0, threads1, len(entries)),
        # calls a second from the end of warm-up until every record arrived (the busy shards' polls and the idle
        # budget's together): a p50 that grows with no more calls than the idle window's plus a call a second per
        # busy shard is the machine's, not the schedule's
        "getRecordsPerSecond": round((calls1["GetRecords"] - calls0["GetRecords"]) / (measured_to - measured_from), 1),
        # the executor's side of those calls: how long they waited for a slot, the idle polls apart, and took
        "callQueue": CallQueue.between(queue0, queue1, measured_to - measured_from),
        **{f"{k}Ms": _durations(batches, k) for k in DURATIONS},
        **loads,
    }


def _fixed_trigger_phase(
    spark: Any,
    sim: Simulator,
    busy: dict[str, list[str]],
    cpu: ProcessCpu,
    jit: JitCpu,
    threads: ThreadCpu,
    queue: CallQueue,
    windows: dict[str, float],
    shards: int,
) -> dict[str, Any]:
    """The traffic window again on a new query (its own checkpoint, from `latest`) triggered every FIXED_TRIGGER."""
    arrivals = _Arrivals()
    with tempfile.TemporaryDirectory(prefix="bench-shardscale-fixed-") as checkpoint:
        query, start, startup = start_query(spark, sim, ",".join(busy), arrivals, checkpoint, shards, FIXED_TRIGGER)
        progress = _Progress(query)
        try:
            time.sleep(max(0.0, min(FIXED_SETTLE_SECONDS, windows["idleAfter"]) - (time.monotonic() - start)))
            traffic = _traffic_phase(sim, busy, arrivals, progress, cpu, jit, threads, queue, windows)
            failure = query.exception()
        finally:
            progress.stop()
            query.stop()
    if failure is not None:
        raise RuntimeError(f"{shards}-shard query with a {FIXED_TRIGGER} trigger failed: {failure}")
    return {"interval": FIXED_TRIGGER, "startSeconds": round(startup, 1), **traffic}


def _p50_by_slice(arrivals: _Arrivals, begun: float, end: float) -> dict[str, float]:
    """p50 put -> row of the records sent in each P50_SLICE_SECONDS from `begun`, keyed by the slice's start."""
    out = {}
    for t in range(0, int(end - begun), P50_SLICE_SECONDS):
        sent = arrivals.sent_between(begun + t, begun + t + P50_SLICE_SECONDS)
        if sent:
            out[str(t)] = _percentiles(sent)["p50"]
    return out


def _per_trigger(before: dict[str, float], after: dict[str, float], triggers: int) -> dict[str, float] | None:
    """CPU ms per trigger on each of TRIGGER_THREADS and in all: what a trigger costs whatever else wants the cores
    (its wall time grows with the machine's load as well)."""
    if not triggers:
        return None
    per = {g: round((after[g] - before[g]) * 1000 / triggers, 2) for g in TRIGGER_THREADS}
    return {**per, "all": round(sum(per.values()), 2), "triggers": triggers}


def _exponent(points: list[tuple[int, float | None]]) -> dict[str, float | None]:
    """Growth on a log-log scale (1 linear, below 1 better): between the smallest and the largest shape
    (`overall`), and the steepest between neighbouring shapes (`steepest`), which a knee at the big end shows."""
    pts = [(s, v) for s, v in points if v is not None and v > 0]

    def slope(a: tuple[int, float], b: tuple[int, float]) -> float:
        return round(math.log(b[1] / a[1]) / math.log(b[0] / a[0]), 2)

    if len(pts) < 2 or pts[0][0] == pts[-1][0]:
        return {"overall": None, "steepest": None}
    return {"overall": slope(pts[0], pts[-1]), "steepest": max(slope(a, b) for a, b in zip(pts, pts[1:]))}


def _median_or_none(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 2) if len(known) == len(values) and known else None


def figures(run: dict[str, Any]) -> dict[str, float | None]:
    """The per-shape figures the report, the plot and the slopes use."""
    idle, traffic, fixed = run["idle"], run["traffic"], run.get("fixedTrigger") or {}

    def median(d: dict[str, Any] | None) -> float | None:
        return d["median"] if d else None

    return {
        "startSeconds": run["startSeconds"],
        "firstAnswersSeconds": run.get("firstAnswersSeconds"),  # runs before 2026-12-06 have none
        "idleTriggerMs": median(idle["triggerExecutionMs"]),
        "idleCpuFraction": idle["cpu"]["fractionOfOneCore"],
        "p50Ms": traffic["ms"]["p50"],
        "p95Ms": traffic["ms"]["p95"],
        "offsetFileBytes": traffic["offsetFileBytes"],
        "walCommitMs": median(traffic["walCommitMs"]),
        "commitOffsetsMs": median(traffic["commitOffsetsMs"]),
        "batchTriggerMs": median(traffic["triggerExecutionMs"]),
        "batchLatestOffsetMs": median(traffic["latestOffsetMs"]),
        "batchTriggerCpuMs": (traffic.get("triggerCpuMs") or {}).get("all"),
        "idleTriggerCpuMs": (idle.get("triggerCpuMs") or {}).get("all"),
        "heapAfterFullGcMiB": run["heapAfterFullGcMiB"],
        "idleAfterTrafficTriggerMs": median(run["idleAfterTraffic"]["triggerExecutionMs"]),
        "idleAfterTrafficCpuFraction": run["idleAfterTraffic"]["cpu"]["fractionOfOneCore"],
        # runs before the fixed-interval window have none
        "fixedTriggerMs": median(fixed.get("triggerExecutionMs")),
        "fixedLatestOffsetMs": median(fixed.get("latestOffsetMs")),
        "fixedTriggerCpuMs": (fixed.get("triggerCpuMs") or {}).get("all"),
    }


def slopes(runs: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    table = [(r["shards"], figures(r)) for r in runs]
    keys = table[0][1].keys() if table else []
    return {k: _exponent([(s, f[k]) for s, f in table]) for k in keys}


def windows_for(settings: Settings, shards: int) -> dict[str, float]:
    """The idle window is shorter from 5000 shards (their streams take longer to make and start): about 20 minutes."""
    big = shards >= 5000
    return {
        "idleAfter": settings.shard_scale_idle_after,
        "idleSeconds": settings.shard_scale_idle_seconds * (0.75 if big else 1.0),
        "trafficSeconds": settings.shard_scale_traffic_seconds,
        "trafficWarmup": settings.shard_scale_traffic_warmup,
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sim.quotas(True)  # ListShards and GetRecords quotas: the source must live within them at every size
    latency = settings.shard_scale_call_latency_ms
    if latency:
        sim.admin.faults({"kind": "latency", "operations": ["GetRecords"], "latencyMillis": latency})
    runs = []
    try:
        with (
            sql_conf(spark, "spark.sql.streaming.noDataProgressEventInterval", IDLE_PROGRESS_INTERVAL),
            sql_conf(spark, "spark.sql.streaming.numRecentProgressUpdates", DEFAULT_PROGRESS_RETENTION),
        ):
            for shards in settings.shard_scale_shards:
                result = measure(spark, sim, shards, windows_for(settings, shards), settings.shard_scale_stream_shards)
                runs.append(result)
                f = figures(result)
                print(
                    f"  {shards} shards: start {f['startSeconds']} s (every shard answered "
                    f"{f['firstAnswersSeconds']} s), idle trigger {f['idleTriggerMs']} ms, idle CPU "
                    f"{f['idleCpuFraction']:.1%} of a core, p50/p95 {f['p50Ms']}/{f['p95Ms']} ms, offset "
                    f"{f['offsetFileBytes']} B, walCommit {f['walCommitMs']} ms, commitOffsets {f['commitOffsetsMs']} "
                    f"ms, heap {f['heapAfterFullGcMiB']} MiB ({result['traffic']['recordsMissing']} missing)",
                    flush=True,
                )
    finally:
        sim.quotas(False)
        if latency:
            sim.admin.clear_faults()
    return {
        "activeEvery": ACTIVE_EVERY,
        **({"getRecordsLatencyMs": latency} if latency else {}),
        "runs": runs,
        "slopes": slopes(runs),
        **({} if settings.shard_scale_headline else {"headline": False}),  # see bench/page.py's _newest_with
    }
