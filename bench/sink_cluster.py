"""Writers on several executors (#52): Spark on `local-cluster[N,1,1024]` (N executor JVMs of one core each, as a
cluster runs them) writes streams of 4 and 16 shards against the simulator's AWS quotas, plain and
`aggregation=kpl`, uniform keys and one hot key (40 % of the rows), as one batch write and as a streaming query.
Every executor writes every shard. Per write, from the simulator's counters sampled every 100 ms:

* the fraction of what the shards take: the rate stored from a second after the first record stored (the shards'
  burst credit spent) until 90 % of the write is stored (streaming: until the query stops), against each shard's
  binding quota (1000 records or 1 MiB a second, as Kinesis counts records: an aggregate is one) over the shards
  the keys reach (one hot key at 40 %: the hot shard's quota over 0.4 + 0.6 / shards);
* the record attempts throttled from the first send on (JVM start not counted: the executors are up first).

With N > 1 each shape runs twice in the same session: `shares` (what ships: each executor starts at its share of
every shard's quota) and `unpaced` (as before #52: each starts unpaced, `spark.sparkkinesis.internal.writerStart`).
With N = 1 there is no share, the single-executor rows. The driver runs in a child process per N (the master is
fixed when its JVM starts):

    python -m bench.sink_cluster --endpoint URL --master local-cluster[2,1,1024] --shards 4,16 --out FILE
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from typing import Any

from bench.child import child_parser, run_child
from bench.env import Settings, Simulator, load, source_options

RECORD_BYTES = 200
PARTITIONS = 8
HOT_SHARE = 0.4
#: a Kinesis record as the quotas count it: data + partition key (a uuid, 36 characters)
KINESIS_RECORD_BYTES = RECORD_BYTES + 36
START_CONF = "spark.sparkkinesis.internal.writerStart"
MIB = 1024 * 1024
#: the unused quota a shard keeps (Kinesis' burst), left out of the measured rate
BURST_SECONDS = 1.0


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    if not settings.sink_cluster_executors:
        return {"skipped": "no executor counts in this mode"}
    sim.quotas(True)
    rows = []
    try:
        for executors in settings.sink_cluster_executors:
            master = f"local-cluster[{executors},1,1024]"
            args = ["--endpoint", sim.endpoint, "--master", master, "--driver-memory", "1g"]
            args += ["--shards", ",".join(map(str, settings.sink_cluster_shards))]
            args += ["--seconds", str(settings.sink_cluster_seconds), "--modes", ",".join(settings.sink_cluster_modes)]
            args += ["--aggregations", ",".join(settings.sink_cluster_aggregations)]
            args += ["--keys", ",".join(settings.sink_cluster_keys)]
            child = run_child(args, settings.child_timeout_seconds, spark_home=True, module="bench.sink_cluster")
            for row in child.get("rows", []):
                rows.append(row | {"executors": executors})
                _print(row | {"executors": executors})
            if not child.get("completed"):
                rows.append({"executors": executors, "error": child.get("error"), "logTail": child.get("logTail")})
                print(f"  {master}: {child.get('error')}", flush=True)
    finally:
        sim.quotas(False)
    failed = [r for r in rows if "error" in r]
    out = {"recordBytes": RECORD_BYTES, "partitions": PARTITIONS, "hotShare": HOT_SHARE, "rows": rows, **load()}
    return out | ({"error": f"{failed[0]['executors']} executors: {failed[0]['error']}"} if failed else {})


def _print(r: dict[str, Any]) -> None:
    print(
        f"  {r['executors']} exec, {r['shards']} shards, {r['aggregation']}, {r['keys']}, {r['mode']}, {r['start']}: "
        f"{r['ofQuota']} of what the shards take, {r['throttledFraction']:.1%} throttled "
        f"({r['throttled']} of {r['attempts']}), {r['seconds']} s",
        flush=True,
    )


# --- the child: one local-cluster session, every shape --------------------------------------------------------
class _Sampler:
    """The stream's stored and throttled counters every 100 ms, from the first write on."""

    def __init__(self, sim: Simulator, stream: str) -> None:
        self.samples: list[tuple[float, int, int, int]] = []
        self._sim, self._stream = sim, stream
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            k = self._sim.stream_counters(self._stream)
            self.samples.append(
                (
                    time.monotonic(),
                    int(k.get("putRecords", 0)),
                    int(k.get("putBytes", 0)),
                    int(k.get("throttledPutRecords", 0)),
                )
            )
            self._stop.wait(0.1)

    def settle(self, after: float, timeout: float = 5.0) -> None:
        """Wait for a sample taken after `after` (the write returned): its counters hold every record the write
        sent."""
        deadline = time.monotonic() + timeout
        while not (self.samples and self.samples[-1][0] > after):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no counters sample within {timeout} s after the write returned")
            self._stop.wait(0.02)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def figures(
    samples: list[tuple[float, int, int, int]], shards: int, hot: bool, until: float | None = None
) -> dict[str, Any]:
    """Rate against the binding quota from a second after the first record stored to 90 % of the total (or
    `until`), and the attempts throttled over the whole write."""
    stored = [s for s in samples if s[1] > 0]
    if not stored:
        return {"ofQuota": None, "throttledFraction": 0.0, "throttled": 0, "attempts": 0, "stored": 0}
    total, throttled = samples[-1][1], samples[-1][3]
    # From a second after the first record stored: a shard keeps up to a second of unused quota, which an idle
    # stream's first second spends on top of the rate (8-second writes measured up to 1.33 of the quota).
    first = next((s for s in stored if s[0] >= stored[0][0] + BURST_SECONDS), stored[0])
    if until is None:
        last = next(s for s in stored if s[1] >= 0.9 * total)
    else:
        last = max((s for s in stored if s[0] <= until), key=lambda s: s[0])
    reached = 1.0 / (HOT_SHARE + (1 - HOT_SHARE) / shards) if hot else float(shards)
    span = last[0] - first[0]
    of_quota = None
    if span > 0:
        records = (last[1] - first[1]) / span / (1000 * reached)
        data = (last[2] - first[2]) / span / (MIB * reached)
        of_quota = round(max(records, data), 3)
    return {
        "ofQuota": of_quota,
        "throttledFraction": round(throttled / (total + throttled), 4) if total + throttled else 0.0,
        "throttled": throttled,
        "attempts": total + throttled,
        "stored": total,
        "measuredSeconds": round(span, 1),
    }


def _rows_for(shards: int, aggregated: bool, hot: bool, seconds: float) -> int:
    """Rows that keep the shards busy for about `seconds` at their quota (aggregated: by bytes)."""
    reached = 1.0 / (HOT_SHARE + (1 - HOT_SHARE) / shards) if hot else float(shards)
    per_second = (MIB / KINESIS_RECORD_BYTES if aggregated else min(1000.0, MIB / KINESIS_RECORD_BYTES)) * reached
    return int(per_second * seconds)


def _write(
    spark: Any, endpoint: str, stream: str, rows: int, hot: bool, aggregated: bool, mode: str, seconds: float
) -> float:
    """One write of `rows` (batch), or a streaming query fed a third above what the shards take for `seconds`."""
    key = f"case when rand() < {HOT_SHARE} then 'hot' else uuid() end" if hot else "uuid()"
    columns = (f"{key} as partitionKey", f"repeat('x', {RECORD_BYTES}) as data")
    options = source_options(endpoint, stream, **({"aggregation": "kpl"} if aggregated else {}))
    started = time.monotonic()
    if mode == "batch":
        df = spark.range(rows, numPartitions=PARTITIONS).selectExpr(*columns)
        df.write.format("kinesis").mode("append").options(**options).save()
        return time.monotonic() - started
    source = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", int(rows / seconds * 1.3))
        .option("numPartitions", PARTITIONS)
        .load()
        .selectExpr(*columns)
    )
    with tempfile.TemporaryDirectory(prefix="bench-sink-cluster-cp-") as checkpoint:
        query = source.writeStream.format("kinesis").options(**options).option("checkpointLocation", checkpoint).start()
        try:
            time.sleep(seconds)  # the streaming write's length: the measurement window
        finally:
            query.stop()
    return time.monotonic() - started


def child_main(argv: list[str] | None = None) -> int:
    parser = child_parser(__doc__, master=None)
    parser.add_argument("--shards", default="4,16")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--modes", default="batch,streaming")
    parser.add_argument("--aggregations", default="none,kpl")
    parser.add_argument("--keys", default="uniform,hot")
    args = parser.parse_args(argv)
    from bench.env import session_builder

    result: dict[str, Any] = {"completed": False, "master": args.master, "rows": []}
    spark = session_builder(args.master, "spark-kinesis-bench-sink-cluster", args.driver_memory).getOrCreate()
    sim = Simulator(args.endpoint)
    try:
        executors = int(args.master.split("[")[1].split(",")[0])
        waited = time.monotonic()
        while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 < executors:
            if time.monotonic() - waited > 120:
                raise RuntimeError(
                    f"only {spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1} executors"
                )
            time.sleep(0.2)  # a cluster's executors are up before its jobs
        starts = ["shares", "unpaced"] if executors > 1 else ["shares"]
        for shards in [int(s) for s in args.shards.split(",")]:
            for aggregated in [a == "kpl" for a in args.aggregations.split(",")]:
                for hot in [k == "hot" for k in args.keys.split(",")]:
                    for mode in args.modes.split(","):
                        for start in starts:
                            spark.conf.set(START_CONF, "unpaced" if start == "unpaced" else "shares")
                            rows = _rows_for(shards, aggregated, hot, args.seconds)
                            stream = sim.new_stream(shards, "bench-sinkcluster")
                            sampler = _Sampler(sim, stream)
                            try:
                                seconds = _write(
                                    spark, args.endpoint, stream, rows, hot, aggregated, mode, args.seconds
                                )
                                returned = time.monotonic()
                                until = returned if mode == "streaming" else None
                                sampler.settle(returned)
                            finally:
                                sampler.stop()
                                sim.delete(stream)
                            result["rows"].append(
                                {
                                    "shards": shards,
                                    "aggregation": "kpl" if aggregated else "none",
                                    "keys": "hot" if hot else "uniform",
                                    "mode": mode,
                                    "start": start,
                                    "rows": rows,
                                    "seconds": round(seconds, 1),
                                    **figures(sampler.samples, shards, hot, until),
                                }
                            )
                            args.out.write_text(json.dumps(result, indent=2) + "\n")
        result["completed"] = True
    except Exception as e:
        result["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        try:
            spark.stop()
        except Exception:
            pass
    return 0 if result["completed"] else 3


if __name__ == "__main__":
    sys.exit(child_main())
