"""A Spark driver of its own, for measurements whose JVM settings only take effect when the JVM starts (a driver
heap of 1 GiB, a local-cluster master): `run_child` starts `python -m bench.child ...` in a new process, which
builds its session like `env.spark_session` (the connector jar on spark.jars), drains one stream from
TRIM_HORIZON with Trigger.AvailableNow into `noop` with default options, and writes what it saw as JSON.

    python -m bench.child --endpoint URL --stream NAME --out FILE [--master M] [--driver-memory 1g]
                          [--timeout S] [--heap] [--option KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.env import REPO, session_builder, source_options
from bench.jvmstats import HeapPeaks

#: heap pools are sampled this often while the query runs (max of used, max of live after GC)
HEAP_SAMPLE_SECONDS = 0.5
#: and the live heap (after a forced full collection, a pause of its own) this often
LIVE_SAMPLE_SECONDS = 3.0


def _metric_values(progress: list[dict[str, Any]], name: str) -> list[float]:
    """A source metric over every progress entry that reports it (the connector reports them as strings)."""
    values = []
    for p in progress:
        for source in p.get("sources") or []:
            value = (source.get("metrics") or {}).get(name)
            if value is not None:
                values.append(float(value))
    return values


def progress_summary(progress: list[dict[str, Any]]) -> dict[str, Any]:
    """Records and batches from the query's progress, and the source metrics the sections report."""
    buffer = _metric_values(progress, "fetchBufferSize")
    prefetched = _metric_values(progress, "totalPrefetchedBytes")
    return {
        "records": sum(int(p["numInputRows"]) for p in progress),
        "batches": sum(1 for p in progress if int(p["numInputRows"]) > 0),
        "fetchBufferSize": int(buffer[-1]) if buffer else None,
        "maxTotalPrefetchedBytes": int(max(prefetched)) if prefetched else None,
        "reReadRanges": int(sum(_metric_values(progress, "reReadRanges"))),
        "kinesisCalls": int(sum(_metric_values(progress, "kinesisCalls"))),
        "throttledCalls": int(sum(_metric_values(progress, "throttledCalls"))),
    }


def drain(
    spark: Any, endpoint: str, stream: str, timeout: float, sample_heap: bool, options: dict[str, str] | None = None
) -> dict[str, Any]:
    """The AvailableNow drain, watched every half second (heap samples) until it ends or `timeout` passes."""
    heap = HeapPeaks(spark) if sample_heap else None
    reader = (
        spark.readStream.format("kinesis")
        .options(**source_options(endpoint, stream, initialPosition="trim_horizon", **(options or {})))
        .load()
    )
    used, live, live_max = 0.0, 0.0, 0.0
    live_before = heap.live_mib() if heap is not None else 0.0
    next_live = time.monotonic() + LIVE_SAMPLE_SECONDS
    with tempfile.TemporaryDirectory(prefix="bench-child-cp-") as checkpoint:
        if heap is not None:
            heap.reset()
        start = time.monotonic()
        query = (
            reader.writeStream.format("noop")
            .trigger(availableNow=True)
            .option("checkpointLocation", checkpoint)
            .start()
        )
        while query.isActive and time.monotonic() - start < timeout:
            if heap is not None:
                used, live = max(used, heap.used_mib()), max(live, heap.live_after_gc_mib())
                if time.monotonic() >= next_live:
                    live_max, next_live = max(live_max, heap.live_mib()), time.monotonic() + LIVE_SAMPLE_SECONDS
            time.sleep(HEAP_SAMPLE_SECONDS)  # a sampling interval
        finished = not query.isActive
        if not finished:
            query.stop()
        seconds = time.monotonic() - start
        failure = query.exception()
        progress = query.recentProgress
    out: dict[str, Any] = {
        "completed": finished and failure is None,
        "timedOut": not finished,
        "error": str(failure).splitlines()[0] if failure is not None else None,
        "seconds": round(seconds, 1),
        **progress_summary(progress),
    }
    if heap is not None:
        out |= {
            "maxHeapMiB": round(heap.max_heap / 1024 / 1024, 1),
            "heapPeakMiB": round(heap.peak_mib(), 1),
            "heapSampledMaxMiB": round(used, 1),
            "liveAfterGcMaxMiB": round(live, 1),
            "liveBeforeMiB": round(live_before, 1),
            "liveMaxMiB": round(live_max, 1),
        }
    return out


def child_parser(doc: str | None, master: str | None = "local[2]") -> argparse.ArgumentParser:
    """What every child driver is told (`run_child` passes --out and --timeout); `master` None: required."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--master", default=master, required=master is None)
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--timeout", type=float, default=900.0)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = child_parser(__doc__)
    parser.add_argument("--stream", required=True)
    parser.add_argument("--heap", action="store_true", help="sample the driver's heap pools")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a source option beyond the defaults (repeatable)",
    )
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"completed": False, "master": args.master, "driverMemory": args.driver_memory}
    started = time.monotonic()
    spark = session_builder(args.master, "spark-kinesis-bench-child", args.driver_memory).getOrCreate()
    result["sessionStartSeconds"] = round(time.monotonic() - started, 1)
    try:
        options = dict(o.split("=", 1) for o in args.option)
        result |= drain(spark, args.endpoint, args.stream, args.timeout, args.heap, options)
    except Exception as e:  # an OutOfMemoryError ends the JVM and surfaces here as a py4j error
        result["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        try:
            spark.stop()
        except Exception:  # the JVM may already be gone (that is what the result says)
            pass
    return 0 if result["completed"] else 3


# --- the parent's side ------------------------------------------------------------------------------------------
def child_env(spark_home: bool) -> dict[str, str]:
    """This process's environment without a gateway to attach to (the child must start its own JVM); with
    `spark_home`, SPARK_HOME is PySpark's own distribution, which local-cluster needs to launch executors."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")}
    if spark_home:
        import pyspark

        env["SPARK_HOME"] = os.path.dirname(pyspark.__file__)
    return env


def run_child(args: list[str], timeout: float, spark_home: bool = False, module: str = "bench.child") -> dict[str, Any]:
    """Runs `python -m MODULE ARGS` (this one by default), in a session of its own so that a timeout ends it
    together with the JVMs it started (the driver, local-cluster's workers and executors); returns its JSON, with
    the log's tail when it failed. The child stops its query at `timeout`; the process gets another 120 s to end."""
    with tempfile.TemporaryDirectory(prefix="bench-child-") as work:
        out, log = Path(work) / "result.json", Path(work) / "child.log"
        command = [sys.executable, "-m", module, *args, "--out", str(out), "--timeout", str(timeout)]
        started = time.monotonic()
        with log.open("w") as sink:
            process = subprocess.Popen(
                command,
                cwd=REPO,
                env=child_env(spark_home),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                code: int | None = process.wait(timeout + 120)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # the child's own process group, nothing else
                process.wait()
                code = None
        result: dict[str, Any] = json.loads(out.read_text()) if out.is_file() else {"completed": False}
        result["processSeconds"] = round(time.monotonic() - started, 1)
        if code != 0:
            result["completed"] = False
            result.setdefault("error", None)
            result["error"] = result["error"] or ("killed after the timeout" if code is None else f"exit {code}")
            result["logTail"] = log.read_text(errors="replace").splitlines()[-30:]
        return result


if __name__ == "__main__":
    sys.exit(main())
