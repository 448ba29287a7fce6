"""One wide stream (1000 shards in a full run), quotas on: what the source costs the driver while the stream is
idle, and how fast rows arrive once every shard gets a little traffic.

* idle triggers: the median `durationMs.triggerExecution` of the triggers reported in an idle window (no-data
  progress is reported every second for this, not every 10 s);
* idle CPU: the driver JVM's process CPU time over that window (`jvmstats.ProcessCpu`) as a fraction of one core;
  the same figure with no query running is recorded beside it (what Spark costs by itself);
* both twice: right after the query started (`idle`), and once the stream has been idle for a while
  (`idleSteady`, from `many_steady_idle_after` seconds after the start): the source polls a shard less often the
  longer it has been silent (`maxIdlePollInterval`), so a query idle for minutes costs less than one just started,
  and the JIT compiles code that runs rarely (an idle trigger's) minutes after the start;
* latency with light traffic on every shard: one record per shard per second, each routed to its shard by
  ExplicitHashKey, spread over the second in ten slices; each record carries its send time and a `foreachBatch`
  on the driver stamps its arrival, as in bench/latency.py. Also twice: over the traffic's first seconds
  (`traffic`), and once it has flowed for `many_steady_traffic_after` seconds (`trafficSteady`): the first records
  run code the idle query never ran (answers with records, batches, the sink), and on two cores the JIT compiling
  it takes half a core for a minute and more, which the first window's latency measures as much as the reader;
* every window also reports the JIT compiler threads' CPU (`jitFractionOfOneCore`): how far the JVM was from warm.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from typing import Any

from bench.env import Settings, Simulator, load, source_options, sql_conf, wait_for
from bench.jvmstats import JitCpu, ProcessCpu
from bench.latency import _percentiles
from bench.scale import IDLE_PROGRESS_INTERVAL, _epoch_ms, _stats

#: after the query is up, before the idle window: its first listings and JIT compilation are not idling
SETTLE_SECONDS = 5.0
#: the no-query CPU baseline is watched for at most this long
BASELINE_SECONDS = 10.0
SLICES_PER_SECOND = 10
PUT_BATCH = 500


def start_query(
    spark: Any,
    sim: Simulator,
    stream: str,
    arrivals: Any,
    checkpoint: str,
    shards: int,
    processing_time: str | None = None,
) -> tuple[Any, float, float]:
    """A default query on `stream` whose batches go to `arrivals.collect`, once it waits for data: the query, its
    start (monotonic seconds) and how long it took to start. `processing_time`: a fixed trigger interval instead
    of Spark's default (the next trigger as soon as one ends)."""
    reader = spark.readStream.format("kinesis").options(**source_options(sim.endpoint, stream)).load()
    start = time.monotonic()
    writer = reader.writeStream.foreachBatch(arrivals.collect).option("checkpointLocation", checkpoint)
    if processing_time is not None:
        writer = writer.trigger(processingTime=processing_time)
    query = writer.start()
    try:
        wait_for(lambda: str(query.status["message"]).startswith("Waiting"), 600, f"the {shards}-shard query to start")
    except BaseException:
        query.stop()
        raise
    return query, start, time.monotonic() - start


def _cpu_fraction(cpu: ProcessCpu, jit: JitCpu, seconds: float) -> dict[str, float]:
    """The JVM's CPU over a wall window, as a fraction of one core, and its JIT compiler threads' share of it."""
    c0, j0, t0 = cpu.seconds(), jit.seconds(), time.monotonic()
    time.sleep(seconds)  # the observation window
    wall = time.monotonic() - t0
    used = cpu.seconds() - c0
    return {
        "wallSeconds": round(wall, 2),
        "cpuSeconds": round(used, 3),
        "fractionOfOneCore": round(used / wall, 4),
        "jitFractionOfOneCore": round((jit.seconds() - j0) / wall, 4),
    }


def _put(sim: Simulator, stream: str, records: list[dict[str, Any]]) -> None:
    """PutRecords in requests of at most 500, resending what failed (a write quota refusal) until all are in."""
    for i in range(0, len(records), PUT_BATCH):
        batch = records[i : i + PUT_BATCH]
        while batch:
            response = sim.client.put_records(StreamName=stream, Records=batch)
            batch = [r for r, res in zip(batch, response["Records"]) if "ErrorCode" in res]
            if batch:
                time.sleep(0.05)  # refused by the write quota: give the shard's bucket a moment


def _traffic(
    sim: Simulator, stream: str, hash_keys: list[str], seconds: float, sent: list[int], stop: threading.Event
) -> None:
    """Every shard one record a second; slice k of each second sends to the shards whose index is k modulo 10,
    paced by the clock (a late slice is sent at once, not skipped)."""
    interval = 1.0 / SLICES_PER_SECOND
    start = time.monotonic()
    n = 0
    while not stop.is_set() and time.monotonic() - start < seconds:
        stamp = time.time()
        records = [
            {"PartitionKey": f"s{i}", "ExplicitHashKey": key, "Data": json.dumps({"t": stamp, "s": i}).encode()}
            for i, key in enumerate(hash_keys)
            if i % SLICES_PER_SECOND == n % SLICES_PER_SECOND
        ]
        _put(sim, stream, records)
        sent[0] += len(records)
        n += 1
        stop.wait(max(0.0, start + n * interval - time.monotonic()))


class _Arrivals:
    """The foreachBatch side: stamps each batch's arrival and keeps every record's send time and latency."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.arrived = 0
        self.latencies: list[tuple[float, float]] = []

    def collect(self, batch: Any, _batch_id: int) -> None:
        rows = batch.select("data").collect()
        now = time.time()
        with self.lock:
            for row in rows:
                stamp = json.loads(bytes(row["data"]))["t"]
                self.arrived += 1
                self.latencies.append((stamp, (now - stamp) * 1000))

    def sent_between(self, start: float, end: float) -> list[float]:
        """The latencies of the records sent in [start, end) (epoch seconds)."""
        with self.lock:
            return [ms for stamp, ms in self.latencies if start <= stamp < end]


def _progress_since(query: Any, started_ms: float) -> list[dict[str, Any]]:
    return [p for p in query.recentProgress if _epoch_ms(p["timestamp"]) >= started_ms]


def _durations(progress: list[dict[str, Any]], key: str) -> dict[str, float] | None:
    return _stats([float(p["durationMs"][key]) for p in progress if key in p.get("durationMs", {})])


def _calls_per_minute(before: dict[str, Any], after: dict[str, Any], seconds: float) -> dict[str, float]:
    def calls(op: str) -> int:
        return int(after.get(op, {}).get("calls", 0)) - int(before.get(op, {}).get("calls", 0))

    return {
        f"{op[0].lower()}{op[1:]}PerMinute": round(calls(op) / seconds * 60, 1)
        for op in ("GetRecords", "ListShards", "GetShardIterator", "DescribeStreamSummary")
    }


def idle_phase(sim: Simulator, stream: str, query: Any, cpu: ProcessCpu, jit: JitCpu, seconds: float) -> dict[str, Any]:
    before = sim.stream_counters(stream)["operations"]
    started_ms = time.time() * 1000
    loads = load()
    window = _cpu_fraction(cpu, jit, seconds)
    progress = _progress_since(query, started_ms)
    return {
        "triggers": len(progress),
        "batches": sum(1 for p in progress if int(p["numInputRows"]) > 0),
        "triggerExecutionMs": _durations(progress, "triggerExecution"),
        "latestOffsetMs": _durations(progress, "latestOffset"),
        "cpu": window,
        **_calls_per_minute(before, sim.stream_counters(stream)["operations"], window["wallSeconds"]),
        **loads,
    }


class _Mark:
    """The stream's call counters, the JIT's CPU and the clocks at one moment of the traffic phase."""

    def __init__(self, sim: Simulator, stream: str, jit: JitCpu) -> None:
        self.calls = sim.stream_counters(stream)["operations"]
        self.jit = jit.seconds()
        self.wall = time.time()
        self.mono = time.monotonic()


def _traffic_window(
    arrivals: _Arrivals, opened: _Mark, closed: _Mark, progress: list[dict[str, Any]], measure_from: float
) -> dict[str, Any]:
    """What one window of the traffic phase measured: latencies of the records sent in it from `measure_from`."""
    seconds = closed.mono - opened.mono
    latencies = arrivals.sent_between(measure_from, closed.wall)
    return {
        "measured": len(latencies),
        "ms": _percentiles(latencies),
        "batches": sum(1 for p in progress if int(p["numInputRows"]) > 0),
        "triggerExecutionMs": _durations(progress, "triggerExecution"),
        "jitFractionOfOneCore": round((closed.jit - opened.jit) / seconds, 4),
        **_calls_per_minute(opened.calls, closed.calls, seconds),
    }


def traffic_phase(
    sim: Simulator,
    stream: str,
    query: Any,
    arrivals: _Arrivals,
    hash_keys: list[str],
    seconds: float,
    jit: JitCpu,
    steady_after: float = 0.0,
) -> dict[str, Any]:
    """A record per shard per second for `seconds`, or for `steady_after + seconds` with a second window at the
    end (`steady`). Each window's progress is read as it ends: Spark keeps only the last hundred."""
    warmup = min(5.0, seconds / 4)  # the first seconds plan the first batches over every shard
    total = steady_after + seconds if steady_after > 0 else seconds
    sent = [0]
    stop = threading.Event()
    loads = load()
    start = _Mark(sim, stream, jit)
    writer = threading.Thread(target=_traffic, args=(sim, stream, hash_keys, total, sent, stop), daemon=True)
    writer.start()
    windows: dict[str, tuple[_Mark, _Mark, list[dict[str, Any]], float]] = {}
    for name, begin, end in [("first", 0.0, seconds)] + ([("steady", steady_after, total)] if steady_after > 0 else []):
        stop.wait(max(0.0, start.mono + begin - time.monotonic()))  # the traffic flows until the window
        opened = _Mark(sim, stream, jit) if begin > 0 else start
        stop.wait(max(0.0, start.mono + end - time.monotonic()))  # the window
        closed = _Mark(sim, stream, jit)
        windows[name] = (
            opened,
            closed,
            _progress_since(query, opened.wall * 1000),
            opened.wall + (warmup if begin == 0 else 0.0),
        )
    writer.join(60)
    stop.set()
    try:  # a record that never arrives is reported as missing, not waited for forever
        wait_for(lambda: arrivals.arrived >= sent[0], 120, "every traffic record to arrive")
    except TimeoutError:
        pass
    measured = {name: _traffic_window(arrivals, *w) for name, w in windows.items()}
    arrived = arrivals.arrived
    out = {
        "recordsSent": sent[0],
        "recordsArrived": arrived,
        "recordsMissing": max(0, sent[0] - arrived),
        "recordsPerSecond": len(hash_keys),
        **measured["first"],
        **loads,
    }
    if "steady" in measured:
        out["steady"] = {"secondsAfterStart": steady_after, **measured["steady"]}
    return out


def measure(
    spark: Any,
    sim: Simulator,
    shards: int,
    idle_seconds: float,
    traffic_seconds: float,
    steady_after: float = 0.0,
    steady_traffic_after: float = 0.0,
) -> dict[str, Any]:
    cpu, jit = ProcessCpu(spark), JitCpu(spark)
    stream = sim.new_stream(shards, "bench-many")
    arrivals = _Arrivals()
    try:
        hash_keys = [s["HashKeyRange"]["StartingHashKey"] for s in sim.shards(stream)]
        baseline = _cpu_fraction(cpu, jit, min(BASELINE_SECONDS, idle_seconds))
        with tempfile.TemporaryDirectory(prefix="bench-many-cp-") as checkpoint:
            query, start, startup = start_query(spark, sim, stream, arrivals, checkpoint, shards)
            try:
                time.sleep(min(SETTLE_SECONDS, idle_seconds / 2))  # not idling yet: see SETTLE_SECONDS
                idle = idle_phase(sim, stream, query, cpu, jit, idle_seconds)
                steady = None
                if steady_after > 0:
                    time.sleep(max(0.0, steady_after - (time.monotonic() - start)))  # the stream stays silent
                    steady = idle_phase(sim, stream, query, cpu, jit, idle_seconds)
                traffic = traffic_phase(
                    sim, stream, query, arrivals, hash_keys, traffic_seconds, jit, steady_traffic_after
                )
                failure = query.exception()
            finally:
                query.stop()
    finally:
        sim.delete(stream)
    if failure is not None:
        raise RuntimeError(f"{shards}-shard query failed: {failure}")
    out = {
        "shards": shards,
        "startSeconds": round(startup, 1),
        "sparkAloneCpu": baseline,
        "idle": idle,
        "traffic": traffic,
    }
    if steady is not None:
        out["idleSteady"] = {"secondsAfterStart": steady_after, **steady}
    if "steady" in traffic:
        out["trafficSteady"] = traffic.pop("steady")
    return out


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sim.quotas(True)  # ListShards and GetRecords have per-stream and per-shard quotas: the source must live within them
    try:
        with sql_conf(spark, "spark.sql.streaming.noDataProgressEventInterval", IDLE_PROGRESS_INTERVAL):
            result = measure(
                spark,
                sim,
                settings.many_shards,
                settings.many_idle_seconds,
                settings.many_traffic_seconds,
                settings.many_steady_idle_after,
                settings.many_steady_traffic_after,
            )
    finally:
        sim.quotas(False)
    idle, traffic = result.get("idleSteady", result["idle"]), result.get("trafficSteady", result["traffic"])
    trigger = idle["triggerExecutionMs"]
    print(
        f"  {result['shards']} shards: idle trigger median {trigger['median'] if trigger else '-'} ms, idle CPU "
        f"{idle['cpu']['fractionOfOneCore']:.1%} of a core (just started: "
        f"{result['idle']['cpu']['fractionOfOneCore']:.1%}), p50 latency {traffic['ms']['p50']} ms (first "
        f"seconds of traffic: {result['traffic']['ms']['p50']} ms; {result['traffic']['recordsMissing']} missing)",
        flush=True,
    )
    return result
