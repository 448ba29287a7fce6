"""`make bench`'s entry point: runs every benchmark in one process, writes bench/results/<UTC date>.json and .md,
the plots, and the results page docs/benchmarks.md (bench/page.py: the newest figure of each section in the results
folder, so a run of a few sections keeps the others' figures).

    python -m bench.run [--mode full|quick|smoke] [--reps N] [--out DIR] [--no-plots] [--docs PATH]
                        [--endpoint URL] [--only read,write,...] [--sbt "java ... -jar sbt-launch.jar"]
                        [--sink-quota-json FILE]
    python -m bench.run --render bench/results/<date>.json [--docs PATH]   # summary, plots, docs again

Environment: BENCH_QUICK=1 (= --mode quick), BENCH_REPS=N, BENCH_STRICT=1 (exit 2 when a target is missed).
Exit status: 0 when every section ran, 1 when the harness broke (a section raised), 2 for a miss under
BENCH_STRICT=1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bench import (
    aggregation,
    batch_read,
    cluster,
    cpu,
    fanout,
    latency,
    lull,
    many_shards,
    memory,
    paced,
    page,
    quota,
    readers,
    realtime,
    report,
    scale,
    shard_scale,
    sink_cluster,
    writers,
)
from bench.env import REPO, Settings, Simulator, dump, load, machine, own_simulator, spark_session

SECTIONS = (
    "read",
    "write",
    "readUnderQuota",
    "pacedRead",
    "cpuPerRecord",
    "writeUnderQuota",
    "aggregation",
    "latency",
    "lull",
    "fanOut",
    "realTime",
    "scale",
    "manyShards",
    "shardScale",
    "memory",
    "batchRead",
    "localCluster",
    "sinkCluster",
)


def run_benchmarks(
    spark: Any,
    sim: Simulator,
    settings: Settings,
    out_dir: Path,
    *,
    plots: bool = True,
    docs_path: Path | None = None,
    only: tuple[str, ...] = SECTIONS,
    sbt: str | None = None,
    sink_quota_json: Path | None = None,
) -> dict[str, Any]:
    """Runs the chosen sections (a section that raises records its error and the others still run), then writes
    the JSON, the markdown summary, the plots and, when asked, the docs page. Returns the results."""
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    started = time.monotonic()
    results: dict[str, Any] = {
        "date": date,
        "startedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(spark),
        "settings": settings.as_dict(),
    }
    steps: dict[str, Callable[[], dict[str, Any]]] = {
        "read": lambda: readers.run(spark, sim, settings),
        "write": lambda: writers.run(spark, sim, settings),
        "readUnderQuota": lambda: quota.run_read(spark, sim, settings),
        "pacedRead": lambda: paced.run(spark, sim, settings),
        "cpuPerRecord": lambda: cpu.run(spark, sim, settings),
        "writeUnderQuota": lambda: _sink_quota(sbt, settings, out_dir, output_stem(results), sink_quota_json),
        "aggregation": lambda: aggregation.run(spark, sim, settings),
        "latency": lambda: latency.run(spark, sim, settings),
        "lull": lambda: lull.run(spark, sim, settings),
        "fanOut": lambda: fanout.run(spark, sim, settings),
        "realTime": lambda: realtime.run(spark, sim, settings),
        "scale": lambda: scale.run(spark, sim, settings),
        "manyShards": lambda: many_shards.run(spark, sim, settings),
        "shardScale": lambda: shard_scale.run(spark, sim, settings),
        "memory": lambda: memory.run(spark, sim, settings),
        "batchRead": lambda: batch_read.run(spark, sim, settings),
        "localCluster": lambda: cluster.run(spark, sim, settings),
        "sinkCluster": lambda: sink_cluster.run(spark, sim, settings),
    }
    for name in SECTIONS:
        if name not in only:
            continue
        print(f"[bench] {name} (load {load()['load1']})", flush=True)
        t = time.monotonic()
        try:
            results[name] = steps[name]()
        except Exception as e:  # the run goes on; the summary names the failed section
            traceback.print_exc()
            results[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        results[name]["sectionSeconds"] = round(time.monotonic() - t, 1)
        dump(out_dir / f"{output_stem(results)}.json", results)  # what ran so far survives a later crash
    results["loadAtEnd"] = load()
    results["elapsedSeconds"] = round(time.monotonic() - started, 1)
    write_outputs(results, out_dir, plots=plots, docs_path=docs_path)
    return results


def write_outputs(
    results: dict[str, Any],
    out_dir: Path,
    *,
    plots: bool = True,
    docs_path: Path | None = None,
    stem: str | None = None,
) -> None:
    """Targets, plots, <stem>.json, <stem>.md and the results page. `stem`: a rendered file's own name (results
    named by hand, e.g. <date>-engine.json, are rendered in place, not copied to <date>.json)."""
    stem = stem or output_stem(results)
    results["targets"] = report.targets(results)
    dump(out_dir / f"{stem}.json", results)  # before the plots: a plotting failure must not lose the figures
    files = report.plot(results, out_dir, stem) if plots else {}
    results["plots"] = files
    dump(out_dir / f"{stem}.json", results)
    (out_dir / f"{stem}.md").write_text(report.markdown(results, files))
    if docs_path is not None:  # the results page: this run's figures, and the newest of every other in out_dir
        extras = REPO / "bench" / "headline-extra.md"
        docs_path.write_text(
            page.render(out_dir, docs_path, current=results, extras=page.load_extras(extras, REPO), extras_path=extras)
        )


def output_stem(results: dict[str, Any]) -> str:
    """<date> for a full run, <date>-quick / <date>-smoke otherwise, so a short run never replaces a full one."""
    mode = results["settings"]["mode"]
    return results["date"] if mode == "full" else f"{results['date']}-{mode}"


def _sink_quota(
    sbt: str | None, settings: Settings, out_dir: Path, date: str, given: Path | None = None
) -> dict[str, Any]:
    if given is not None:  # a file SinkQuotaBench wrote earlier
        return quota.fold_sink_quota(json.loads(given.read_text())) | {"from": str(given)}
    if sbt is None or not quota.sink_quota_available():
        note = "SinkQuotaBench not available" + (
            "" if quota.sink_quota_available() else f" (no {quota.SINK_QUOTA_SOURCE} on this branch)"
        )
        print(f"  {note}", flush=True)
        return {"available": False, "note": note}
    return quota.run_sink_quota(sbt, settings, out_dir / f"{date}-sink-quota.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--mode",
        choices=("full", "quick", "smoke"),
        default="quick" if os.environ.get("BENCH_QUICK") == "1" else "full",
    )
    parser.add_argument(
        "--reps", type=int, default=int(os.environ["BENCH_REPS"]) if os.environ.get("BENCH_REPS") else None
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument(
        "--docs", type=Path, default=None, help="write the docs page here (make bench: docs/benchmarks.md)"
    )
    parser.add_argument("--endpoint", default=None, help="a running simulator instead of one started here")
    parser.add_argument("--only", default=",".join(SECTIONS))
    parser.add_argument("--sbt", default=os.environ.get("BENCH_SBT"), help="how to run sbt, for SinkQuotaBench")
    parser.add_argument(
        "--sink-quota-json", type=Path, default=None, help="fold this SinkQuotaBench output in instead of running it"
    )
    parser.add_argument(
        "--quota-variant",
        action="append",
        default=[],
        metavar="KEY=VALUE[,KEY=VALUE]",
        help="also read under quota with these source options (e.g. maxFetchRate=2)",
    )
    parser.add_argument("--render", type=Path, default=None, help="only rebuild the outputs of this results JSON")
    parser.add_argument(
        "--shard-scale-shards",
        default=None,
        metavar="N[,N]",
        help="shardScale's shapes instead of the mode's (e.g. 10000,20000: a shape above 10,000 is two streams)",
    )
    parser.add_argument(
        "--shard-scale-call-latency-ms",
        type=int,
        default=0,
        metavar="MS",
        help="shardScale with every GetRecords answered MS ms later (a slower endpoint; the run is a probe)",
    )
    args = parser.parse_args(argv)
    args.out = args.out.resolve()  # SinkQuotaBench runs in sbt's forked JVM, whose working folder is not ours
    if args.render is not None:
        results = json.loads(args.render.read_text())
        write_outputs(results, args.render.parent, plots=not args.no_plots, docs_path=args.docs, stem=args.render.stem)
        print((args.render.parent / f"{args.render.stem}.md").read_text())
        return 0
    settings = Settings.for_mode(args.mode, args.reps)
    if args.shard_scale_shards:
        settings.shard_scale_shards = [int(n) for n in args.shard_scale_shards.split(",")]
        settings.shard_scale_headline = False
    if args.shard_scale_call_latency_ms:
        settings.shard_scale_call_latency_ms = args.shard_scale_call_latency_ms
        settings.shard_scale_headline = False
    for variant in args.quota_variant:
        settings.quota_variants[variant] = dict(pair.split("=", 1) for pair in variant.split(","))
    only = tuple(s for s in args.only.split(",") if s)
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s) {sorted(unknown)}; known: {', '.join(SECTIONS)}")

    with ExitStack() as stack:
        sim = Simulator(args.endpoint) if args.endpoint else stack.enter_context(own_simulator())
        spark = spark_session()
        stack.callback(spark.stop)
        results = run_benchmarks(
            spark,
            sim,
            settings,
            args.out,
            plots=not args.no_plots,
            docs_path=args.docs,
            only=only,
            sbt=args.sbt,
            sink_quota_json=args.sink_quota_json,
        )
    print((args.out / f"{output_stem(results)}.md").read_text())
    broken = [name for name in SECTIONS if "error" in results.get(name, {})]
    missed = [t for t in results["targets"] if t["verdict"] == "MISS"]
    if broken:
        print(f"[bench] harness broke in: {', '.join(broken)}", file=sys.stderr)
        return 1
    if missed and os.environ.get("BENCH_STRICT") == "1":
        print(f"[bench] BENCH_STRICT=1 and {len(missed)} target(s) missed", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
