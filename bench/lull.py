"""Latency when traffic is rare, at default options with quotas on (#42's targets): how long the first record after
a silence waits (put -> row, a few shards), and how long records wait on a wide stream where a record comes now and
then on a random shard. Each record carries its send time; a `foreachBatch` on the driver stamps its arrival
(writer and reader share the machine's clock). The GetRecords calls the stream received while silent are counted
too: they are what polling idle shards costs."""

from __future__ import annotations

import json
import statistics
import tempfile
import threading
import time
import uuid
from typing import Any

from bench.env import Settings, Simulator, load, source_options, wait_for


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p95": float("nan"), "max": float("nan")}
    if len(values) == 1:
        return {"p50": round(values[0], 1), "p95": round(values[0], 1), "max": round(values[0], 1)}
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(q[49], 1), "p95": round(q[94], 1), "max": round(max(values), 1)}


class _Query:
    """A default streaming query on `stream` whose batches record each row's put -> row latency (ms)."""

    def __init__(self, spark: Any, sim: Simulator, stream: str) -> None:
        self.latencies: list[float] = []
        self.arrived = 0
        self._lock = threading.Lock()
        self._checkpoint = tempfile.TemporaryDirectory(prefix="bench-lull-cp-")
        reader = spark.readStream.format("kinesis").options(**source_options(sim.endpoint, stream)).load()

        def collect(batch: Any, _batch_id: int) -> None:
            rows = batch.select("data").collect()
            now = time.time()
            with self._lock:
                for row in rows:
                    self.latencies.append((now - json.loads(bytes(row["data"]))["t"]) * 1000)
                    self.arrived += 1

        self.query = (
            reader.writeStream.foreachBatch(collect).option("checkpointLocation", self._checkpoint.name).start()
        )
        # `latest` is pinned when the first trigger plans: records are put only once the query is past its start.
        wait_for(lambda: str(self.query.status["message"]).startswith("Waiting"), 120, "the lull query to start")

    def count(self) -> int:
        with self._lock:
            return self.arrived

    def stop(self) -> None:
        failure = self.query.exception()
        self.query.stop()
        self._checkpoint.cleanup()
        if failure is not None:
            raise RuntimeError(f"lull query failed: {failure}")


def _put(sim: Simulator, stream: str) -> None:
    sim.client.put_record(
        StreamName=stream, PartitionKey=uuid.uuid4().hex, Data=json.dumps({"t": time.time()}).encode()
    )


def _get_records(sim: Simulator, stream: str) -> int:
    return int(sim.stream_counters(stream).get("getRecordsCalls", 0))


def after_lull(spark: Any, sim: Simulator, shards: int, silence: float, lulls: int) -> dict[str, Any]:
    """`lulls` times: `silence` seconds without a record, then one record; its put -> row latency."""
    stream = sim.new_stream(shards, "bench-lull")
    query = _Query(spark, sim, stream)
    try:
        _put(sim, stream)  # warms the path up; not counted
        wait_for(lambda: query.count() >= 1, 120, "the warm-up record")
        query.latencies.clear()
        calls_while_silent: list[float] = []
        for n in range(1, lulls + 1):
            before = _get_records(sim, stream)
            time.sleep(silence)  # the silence is the scenario, not a wait for a condition
            calls_while_silent.append((_get_records(sim, stream) - before) / silence)
            _put(sim, stream)
            wait_for(lambda n=n: query.count() >= n + 1, 120, f"the record after lull {n}")
        latencies = list(query.latencies)
    finally:
        query.stop()
        sim.delete(stream)
    return {
        "shards": shards,
        "silenceSeconds": silence,
        "lulls": lulls,
        "ms": _percentiles(latencies),
        "samplesMs": [round(v, 1) for v in latencies],
        "getRecordsPerSecondWhileSilent": round(statistics.mean(calls_while_silent), 2),
    }


def sparse(spark: Any, sim: Simulator, shards: int, settle: float, interval: float, seconds: float) -> dict[str, Any]:
    """A wide stream, silent for `settle` seconds (its shards go idle), then a record every `interval` seconds on a
    random shard for `seconds`: each record's put -> row latency."""
    stream = sim.new_stream(shards, "bench-sparse")
    query = _Query(spark, sim, stream)
    try:
        before = _get_records(sim, stream)
        time.sleep(settle)  # the silence before the traffic is the scenario
        idle_calls = (_get_records(sim, stream) - before) / settle
        loads = load()
        sent = 0
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            _put(sim, stream)
            sent += 1
            time.sleep(max(0.0, start + sent * interval - time.monotonic()))
        wait_for(lambda: query.count() >= sent, 120, "every sparse record to arrive")
        latencies = list(query.latencies)
    finally:
        query.stop()
        sim.delete(stream)
    return {
        "shards": shards,
        "settleSeconds": settle,
        "intervalSeconds": interval,
        "seconds": seconds,
        "records": sent,
        "ms": _percentiles(latencies),
        "getRecordsPerSecondIdle": round(idle_calls, 1),
        **loads,
    }


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sim.quotas(True)
    try:
        lull = after_lull(spark, sim, settings.lull_shards, settings.lull_silence_seconds, settings.lull_count)
        print(
            f"  after a {settings.lull_silence_seconds:.0f} s lull, {settings.lull_shards} shards: p50 "
            f"{lull['ms']['p50']} ms, max {lull['ms']['max']} ms; {lull['getRecordsPerSecondWhileSilent']} "
            "GetRecords/s while silent",
            flush=True,
        )
        wide = sparse(
            spark,
            sim,
            settings.sparse_shards,
            settings.sparse_settle_seconds,
            settings.sparse_interval_seconds,
            settings.sparse_seconds,
        )
        print(
            f"  sparse, {settings.sparse_shards} shards, a record every {settings.sparse_interval_seconds} s: p50 "
            f"{wide['ms']['p50']} ms, p95 {wide['ms']['p95']} ms; {wide['getRecordsPerSecondIdle']} GetRecords/s idle",
            flush=True,
        )
    finally:
        sim.quotas(False)
    return {"afterLull": lull, "sparse": wide}
