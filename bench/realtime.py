"""Real-time mode against micro-batches at 100 ms, polling and enhanced fan-out, on the simulator with AWS's quotas:
put→row latency at a light and a heavy rate on 4 shards. A boto3 writer stamps each PutRecords batch with its send
time (in the payload); the query takes the JVM's clock in the task as it projects each row
(`reflect('java.lang.System', 'currentTimeMillis')`: `current_timestamp()` is fixed per batch, and a real-time batch
lasts seconds), so both triggers are measured at the same place, before any sink. Rows go to a `foreach` writer
(one of the sinks Spark allows in real-time mode) that appends the latencies to files read afterwards.

4 shards take 4000 records/s under Kinesis' write quota: for the heavy rate the simulator's quotas are doubled (the
connector still paces its reads to 5 calls/s per shard on its own)."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import latency
from bench.env import Settings, Simulator, load, source_options, wait_for

SHARDS = 4
MODES = {"polling": {}, "efo": {"consumerMode": "efo", "requireConsumerDeregistration": "true"}}
TRIGGERS = ("realTime", "processingTime=100ms")


class _Appender:
    """A `foreach` writer: each task appends its rows' latencies to a file of its own."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.out = open(Path(self.directory) / f"p{partition_id}-e{epoch_id}-{time.monotonic_ns()}.txt", "a")
        return True

    def process(self, row: Any) -> None:
        self.out.write(f"{row['t']} {row['ms']}\n")

    def close(self, error: Any) -> None:
        self.out.close()


def _writer(sim: Simulator, stream: str, rate: int, seconds: float, sent: list[int], stop: threading.Event) -> None:
    """`rate` records/s in batches sized to about 50 calls a second, paced by the clock; failed records are sent
    again with a fresh stamp (a throttled write is the writer's delay, not the reader's)."""
    batch = max(10, rate // 50)
    interval = batch / rate
    start = time.monotonic()
    n = 0
    while not stop.is_set() and time.monotonic() - start < seconds:
        pending = [(f"k{n}-{i}", i) for i in range(batch)]
        while pending:
            stamp = time.time()
            records = [
                {"PartitionKey": key, "Data": json.dumps({"t": stamp, "n": n, "i": i}).encode()} for key, i in pending
            ]
            response = sim.client.put_records(StreamName=stream, Records=records)
            pending = [p for p, res in zip(pending, response["Records"]) if "ErrorCode" in res]
        sent[0] += batch
        n += 1
        stop.wait(max(0.0, start + n * interval - time.monotonic()))


def measure(spark: Any, sim: Simulator, mode: str, trigger: str, rate: int, seconds: float) -> dict[str, Any]:
    from pyspark.sql.functions import col, expr, get_json_object

    stream = sim.new_stream(SHARDS, "bench-rt")
    warmup = min(3.0, seconds / 5)
    reader = spark.readStream.format("kinesis").options(**source_options(sim.endpoint, stream, **MODES[mode])).load()
    stamp = get_json_object(col("data").cast("string"), "$.t").cast("double")
    rows = reader.select(
        stamp.alias("t"),
        (expr("cast(reflect('java.lang.System', 'currentTimeMillis') as bigint)") - stamp * 1000).alias("ms"),
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-rt-cp-") as checkpoint,
        tempfile.TemporaryDirectory(prefix="bench-rt-out-") as out,
    ):
        writer = rows.writeStream.outputMode("update").foreach(_Appender(out)).option("checkpointLocation", checkpoint)
        # One real-time batch covers the whole run: its tasks read throughout, and it ends once the records are in.
        batch_seconds = int(seconds + 20)
        query = (
            writer.trigger(realTime=f"{batch_seconds} seconds")
            if trigger == "realTime"
            else writer.trigger(processingTime="100 milliseconds")
        ).start()
        sent = [0]
        stop = threading.Event()
        try:
            # Writing starts once every shard is being read: a real-time batch's tasks take seconds to start, and
            # the records put meanwhile would measure the start, not the reading.
            op, per_shard = ("GetRecords", 2) if mode == "polling" else ("SubscribeToShard", 1)
            wait_for(
                lambda: (
                    int(sim.stream_counters(stream)["operations"].get(op, {}).get("calls", 0)) >= per_shard * SHARDS
                ),
                180,
                f"every shard's {op} calls",
            )
            loads = load()
            t0 = time.time()
            thread = threading.Thread(target=_writer, args=(sim, stream, rate, seconds, sent, stop), daemon=True)
            thread.start()
            thread.join(seconds + 60)

            def samples() -> list[tuple[float, float]]:
                return [
                    (float(t), float(ms))
                    for f in Path(out).glob("*.txt")
                    for t, ms in (line.split() for line in f.read_text().splitlines() if line)
                ]

            # Real-time rows reach the files when the batch ends (the Python writer flushes its rows then).
            wait_for(lambda: len(samples()) >= sent[0], batch_seconds + 120, "every latency record to arrive")
            failure = query.exception()
            got = samples()
        finally:
            stop.set()
            query.stop()
    sim.delete(stream)
    if failure is not None:
        raise RuntimeError(f"real-time latency query failed: {failure}")
    measured = [ms for t, ms in got if t >= t0 + warmup]
    return {
        "mode": mode,
        "trigger": trigger,
        "recordsPerSecond": rate,
        "recordsSent": sent[0],
        "recordsArrived": len(got),
        "measured": len(measured),
        "ms": latency._percentiles(measured),
        **loads,
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    runs = []
    try:
        for rate in settings.realtime_rates:
            # Above 1000 records/s per shard the writer would meet Kinesis' write quota: doubled for that rate.
            sim.admin.quotas(enabled=True, factor=2.0 if rate > 1000 * SHARDS else 1.0)
            for mode in settings.realtime_modes:
                for trigger in TRIGGERS:
                    r = measure(spark, sim, mode, trigger, rate, settings.realtime_seconds)
                    runs.append(r)
                    print(
                        f"  real-time latency, {mode}, {trigger}, {rate} rec/s: p50 {r['ms']['p50']} ms, "
                        f"p99 {r['ms']['p99']} ms",
                        flush=True,
                    )
    finally:
        sim.quotas(True)
    return {"shards": SHARDS, "seconds": settings.realtime_seconds, "runs": runs}
