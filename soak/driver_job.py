"""The streaming query under test, run by `spark-submit` (one process per driver incarnation, see soak/driver.py).

    spark-submit --master local-cluster[2,1,1024] --jars <connector jar> soak/driver_job.py \
        --endpoint URL --stream NAME --mode polling|efo --checkpoint DIR --sink DIR --control DIR --incarnation N

It reads the stream with the connector's source (`spark.readStream.format("kinesis")`, from TRIM_HORIZON, a
processing-time trigger, a checkpoint) into an idempotent sink: `foreachBatch` writes one file per batch id,
`batch-<id>.jsonl`, replaced whole (a replayed batch overwrites its file, so replays cannot add rows), one row per
record keyed on (stream, shardId, sequenceNumber, subSequenceNumber) with the payload, in the order the batch's
DataFrame gives them. A replay that writes rows other than the file already holds breaks the connector's
deterministic-replay guarantee; it is kept as `replay-mismatch-*.json` evidence before the file is replaced.

The harness talks to it through files in the control folder (no port to find, nothing to hang on):
In the pipeline modes (`--sink-stream B`) the query instead writes every row to stream B with the connector's own
sink (`writeStream.format("kinesis")`, `preserveKeyOrder=true`, with `--aggregation kpl` packed as KPL aggregates),
each record's data tagged with where it came from and who wrote it: `{"src": "<A shard> <A sequence number> <A
sub-sequence number>", "inc": <driver incarnation>, "eval": "<executor nanoTime>", "p": <A's data>}`.
The tag lets the checks tell a duplicate's cause (soak/pipeline_checks.py); the partition key is A's.

`<n>.started.json` (written once the query runs: the JVM's pid), `<n>.stop` (asks for a graceful stop),
`<n>.measure-<k>` (asks for the heap after a full GC, answered in `<n>.measure-<k>.json`), `<n>.progress.jsonl`
(the query's progress, one line per batch), `<n>.exit.json` (why it ended: a requested stop, or the exception).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

POLL_SECONDS = 0.25
#: the query's recent progress goes through py4j as JSON: read every few seconds only
PROGRESS_SECONDS = 2.0


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class BatchSink:
    """The idempotent sink: one file per batch id, replaced whole."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, df: Any, batch_id: int) -> None:
        rows = df.collect()
        # PySpark's collect streams pickled row batches (1, 2, 4, 8, ... rows) from the JVM over a socket and ends at
        # its end of stream: when the driver JVM is killed mid-transfer, the Python program, which outlives it by a
        # few milliseconds, gets the rows of the whole batches so far as if they were all (seen: 31 rows of a
        # 3,177-row batch). A call into the JVM after the collect fails in that case, so nothing is written: the
        # batch was not committed and the next driver replays it.
        df.sparkSession.sparkContext._jvm.java.lang.System.nanoTime()
        text = "".join(
            json.dumps(
                {
                    "stream": r.stream,
                    "shardId": r.shardId,
                    "seq": r.sequenceNumber,
                    "sub": int(r.subSequenceNumber),
                    "data": r.data,
                },
                separators=(",", ":"),
            )
            + "\n"
            for r in rows
        )
        path = self.folder / f"batch-{batch_id:09d}.jsonl"
        if path.exists():
            before = path.read_text()
            if before != text:
                evidence = {
                    "batchId": batch_id,
                    "before": before.splitlines(),
                    "after": text.splitlines(),
                    "time": time.time(),
                }
                write_atomically(
                    self.folder / f"replay-mismatch-{batch_id:09d}-{time.time_ns()}.json", json.dumps(evidence)
                )
        write_atomically(path, text)


def measure(spark: Any) -> dict[str, Any]:
    """The driver JVM's heap after a full collection, and its own thread count (the harness reads /proc too)."""
    jvm = spark.sparkContext._jvm
    factory = jvm.java.lang.management.ManagementFactory
    jvm.java.lang.System.gc()
    heap = factory.getMemoryMXBean().getHeapMemoryUsage()
    return {
        "time": time.time(),
        "heapUsedAfterGc": int(heap.getUsed()),
        "heapCommitted": int(heap.getCommitted()),
        "heapMax": int(heap.getMax()),
        "jvmThreads": int(factory.getThreadMXBean().getThreadCount()),
    }


def progress_line(p: dict[str, Any]) -> dict[str, Any]:
    sources = p.get("sources") or [{}]
    return {
        "batchId": p.get("batchId"),
        "timestamp": p.get("timestamp"),
        "numInputRows": p.get("numInputRows"),
        "metrics": sources[0].get("metrics") or {},
    }


def pipeline_writer(source: Any, args: argparse.Namespace, options: dict[str, str], incarnation: int) -> Any:
    """Stream A's rows to stream B through the connector's sink, each tagged with its origin and its evaluation."""
    # `eval` is the executor's System.nanoTime when the row was computed (`java_method`, which Spark treats as
    # nondeterministic: computed per row, never folded). Spark has no SQL function for a task's attempt, and a
    # Python UDF would start a Python worker in every executor; this tells the same apart: a retried task computes
    # its rows again (another value), while the sink resending a request sends the same bytes (the same value).
    tagged = source.selectExpr(
        "partitionKey",
        "concat('{\"src\":\"', shardId, ' ', sequenceNumber, ' ', subSequenceNumber, "
        f"'\",\"inc\":{incarnation},\"eval\":\"', java_method('java.lang.System', 'nanoTime'), "
        "'\",\"p\":', cast(data as string), '}') as data",
    )
    sink = {
        k: v
        for k, v in options.items()
        if k not in ("streamName", "initialPosition", "consumerMode", "maxRecordsPerTrigger")
    }
    # An attempt timeout shorter than the chaos's slow answers (6-8 s, soak/plan.py): the sink resends a request
    # whose records Kinesis stores all the same, the third source of duplicates (what a user's shorter timeout meets).
    sink |= {"streamName": args.sink_stream, "preserveKeyOrder": "true", "apiCallAttemptTimeout": "5s"}
    if args.aggregation == "kpl":
        sink["aggregation"] = "kpl"
    return tagged.writeStream.format("kinesis").options(**sink)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("--endpoint", "--stream", "--mode", "--checkpoint", "--sink", "--control"):
        parser.add_argument(name, required=True)
    parser.add_argument("--incarnation", type=int, required=True)
    parser.add_argument("--trigger", default="1 second")
    parser.add_argument("--sink-stream", default=None, help="pipeline mode: write every row to this stream")
    parser.add_argument("--aggregation", default="none", choices=["none", "kpl"])
    args = parser.parse_args(argv)
    control = Path(args.control)
    n = args.incarnation

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName(f"spark-kinesis-soak-{n}")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    options = {
        "streamName": args.stream,
        "endpoint": args.endpoint,
        "region": "us-east-1",
        "awsAccessKey": "test",
        "awsSecretKey": "test",
        "initialPosition": "trim_horizon",
        "consumerMode": args.mode,
    }
    if args.sink_stream is not None:
        # Pipeline mode: batches small enough that a write task ends between executor kills. Uncapped, a restart's
        # backlog made write tasks of 100 s; the chaos (an executor kill every ~50 s) killed one task's four attempts
        # and the query failed (seed 2026112860, docs/dev/soak.md), whose next driver had a larger backlog still.
        options["maxRecordsPerTrigger"] = "2000"
    source = spark.readStream.format("kinesis").options(**options).load()
    if args.sink_stream is None:
        df = source.selectExpr(
            "stream", "shardId", "sequenceNumber", "subSequenceNumber", "cast(data as string) as data"
        )
        writer = df.writeStream.foreachBatch(BatchSink(Path(args.sink)))
    else:
        writer = pipeline_writer(source, args, options, n)
    query = (
        writer.trigger(processingTime=args.trigger)
        .option("checkpointLocation", args.checkpoint)
        .queryName(f"soak-{args.mode}")
        .start()
    )
    jvm: Any = spark.sparkContext._jvm
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    write_atomically(
        control / f"{n}.started.json",
        json.dumps(
            {
                "jvmPid": pid,
                "pythonPid": os.getpid(),
                "queryId": str(query.id),
                "runId": str(query.runId),
                "time": time.time(),
            }
        ),
    )
    stop_requested = False
    seen_batches: set[int] = set()
    answered: set[str] = set()
    next_progress = 0.0
    with (control / f"{n}.progress.jsonl").open("a") as progress:
        while query.isActive:
            if not stop_requested and (control / f"{n}.stop").exists():
                stop_requested = True
                query.stop()
                break
            for request in control.glob(f"{n}.measure-*"):
                if request.suffix == ".json" or request.name in answered:
                    continue
                answered.add(request.name)
                write_atomically(control / f"{request.name}.json", json.dumps(measure(spark)))
            if time.monotonic() >= next_progress:
                next_progress = time.monotonic() + PROGRESS_SECONDS
                for p in query.recentProgress:
                    batch = p["batchId"]
                    if batch not in seen_batches:
                        seen_batches.add(batch)
                        progress.write(json.dumps(progress_line(p)) + "\n")
                progress.flush()
            time.sleep(POLL_SECONDS)
    failure = query.exception()
    exit_info = {
        "stopRequested": stop_requested,
        "time": time.time(),
        "exception": None if failure is None else str(failure),
    }
    write_atomically(control / f"{n}.exit.json", json.dumps(exit_info))
    spark.stop()
    return 0 if stop_requested and failure is None else 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # noqa: BLE001 - whatever ended it goes to the log the harness keeps
        traceback.print_exc()
        sys.exit(3)
