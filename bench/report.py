"""Results → targets (PASS/MISS), the markdown summary, the PNG plots and docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

READ_RATIO = 0.9
WRITE_RATIO = 0.9
QUOTA_FRACTION = 0.95
THROTTLED_FRACTION = 0.05
P50_MS = 1000.0


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per target and shape; a section that did not run shows as NOT RUN, never as a PASS."""
    rows: list[dict[str, Any]] = []

    def add(target: str, shape: str, value: Any, ok: bool | None) -> None:
        rows.append({"target": target, "shape": shape, "value": value,
                     "verdict": "NOT RUN" if ok is None else _verdict(ok)})

    for section, ratio, name in (("read", READ_RATIO, "read ≥ 0.9× raw SDK"),
                                 ("write", WRITE_RATIO, "write ≥ 0.9× raw SDK")):
        data = results.get(section) or {}
        if not data.get("shapes"):
            add(name, "-", data.get("error", "not run"), None)
        for s in data.get("shapes", []):
            value = s.get("ratioToRawSdk")
            add(name, f"{s['recordBytes']} B × {s['shards']} shard(s)", value, value is not None and value >= ratio)

    quota = results.get("readUnderQuota") or {}
    if not quota.get("runs"):
        add("read ≥ 0.95 of quota, ≤ 5% throttled", "-", quota.get("error", "not run"), None)
    for r in quota.get("runs", []):
        if r.get("options", "defaults") != "defaults":
            continue
        ok = r["fractionOfByteQuota"] >= QUOTA_FRACTION and (r["throttledFraction"] or 0) <= THROTTLED_FRACTION
        add("read ≥ 0.95 of quota, ≤ 5% throttled", f"{r['recordBytes']} B × {r['shards']} shard(s)",
            f"{r['fractionOfByteQuota']} of quota, {r['throttledFraction']} throttled", ok)

    sink = results.get("writeUnderQuota") or {}
    adaptive = [r for r in sink.get("summary", []) if r.get("mode") == "adaptive"]
    if not adaptive:
        add("write (adaptive) ≥ 0.95 of achievable, ≤ 5% throttled", "-",
            sink.get("note") or sink.get("error") or "not run", None)
    for r in adaptive:
        ok = (r["fractionOfAchievable"] or 0) >= QUOTA_FRACTION and (r["throttledFraction"] or 1) <= THROTTLED_FRACTION
        add("write (adaptive) ≥ 0.95 of achievable, ≤ 5% throttled",
            f"{r['shards']} shard(s), {r['tasks']} task(s), {r['keys']} keys",
            f"{r['fractionOfAchievable']:.3f} of achievable, {r['throttledFraction']:.4f} throttled", ok)

    latency = results.get("latency") or {}
    if not latency.get("runs"):
        add("p50 latency ≤ 1 s", "-", latency.get("error", "not run"), None)
    for r in latency.get("runs", []):
        add("p50 latency ≤ 1 s", f"trigger {r['name']}", f"{r['ms']['p50']} ms", r["ms"]["p50"] <= P50_MS)
    return rows


def _num(v: Any, digits: int = 0) -> str:
    if v is None:
        return "-"
    if isinstance(v, (int, float)):
        return f"{v:,.{digits}f}"
    return str(v)


def markdown(results: dict[str, Any], plots: dict[str, str], image_prefix: str = "") -> str:
    """The summary: machine, targets, then one table per benchmark. `image_prefix` makes plot paths relative to
    where the markdown lives."""
    m = results["machine"]
    out = [f"# spark-kinesis benchmarks — {results['date']}", "",
           f"Mode `{results['settings']['mode']}`, {results['settings']['repetitions']} repetition(s) per shape "
           f"(medians), {results.get('elapsedSeconds', 0):.0f} s in all. Machine: {m['cpuCount']} × {m['cpuModel']}, "
           f"{m['memoryGiB']} GiB; Spark {m.get('spark', '?')}, Java {m.get('java', '?')}, connector "
           f"{m['connector']}, AWS SDK for Java {m['awsSdkJava']}, boto3 {m['boto3']}. Load average at start "
           f"{m['load1AtStart']} / {m['load5AtStart']} / {m['load15AtStart']} (1/5/15 min), at the end "
           f"{_num(results.get('loadAtEnd', {}).get('load1'), 2)}: with other work on the machine the figures are "
           "noisy; compare ratios measured inside one run, not absolute rates across runs.", "",
           "## Targets", "", "| target | shape | measured | verdict |", "|---|---|---|---|"]
    for row in results["targets"]:
        out.append(f"| {row['target']} | {row['shape']} | {_num(row['value'], 3)} | **{row['verdict']}** |")
    errors = {k: v["error"] for k, v in results.items() if isinstance(v, dict) and "error" in v}
    if errors:
        out += ["", "Sections that failed:", ""] + [f"- `{k}`: {v}" for k, v in errors.items()]

    for section, title, contender in (("read", "Read throughput (quotas off)", "connector"),
                                      ("write", "Write throughput (quotas off)", "sink")):
        data = results.get(section) or {}
        if not data.get("shapes"):
            continue
        inside = section == "read"
        out += ["", f"## {title}", "", f"| record | shards | {contender} rec/s | MiB/s | "
                + ("inside batches rec/s | " if inside else "") + "raw SDK rec/s | MiB/s | boto3 rec/s | MiB/s | "
                "ratio to raw SDK |", "|---|---|---|---|" + ("---|" if inside else "") + "---|---|---|---|---|"]
        for s in data["shapes"]:
            c, r, b = s["connector"], s["rawSdk"], s["boto3"]
            extra = f"{_num(s.get('connectorInBatchesRecordsPerSecond'))} | " if inside else ""
            out.append(f"| {s['recordBytes']} B | {s['shards']} | {_num(c['recordsPerSecond'])} | "
                       f"{_num(c['mibPerSecond'], 2)} | {extra}{_num(r['recordsPerSecond'])} | "
                       f"{_num(r['mibPerSecond'], 2)} | {_num(b['recordsPerSecond'])} | {_num(b['mibPerSecond'], 2)} | "
                       f"{_num(s['ratioToRawSdk'], 3)} |")
    read = results.get("read") or {}
    if read.get("memory"):
        mem = read["memory"]
        out += ["", "## Memory (read benchmark)", "", f"Method: {mem['method']}. Max heap {mem['maxHeapMiB']} MiB.",
                "", "| record | shards | heap peak MiB (driver = executor) |", "|---|---|---|"]
        out += [f"| {p['recordBytes']} B | {p['shards']} | {_num(p['heapPeakMiB'], 1)} |" for p in mem["peaks"]]

    quota = results.get("readUnderQuota") or {}
    if quota.get("runs"):
        out += ["", "## Read under quota (2 MiB/s and 5 GetRecords/s per shard)", ""]
        if quota.get("note"):
            out += [quota["note"], ""]
        out += ["| source options | record | shards | MiB/s | of byte quota | GetRecords/s per shard | throttled calls |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| {r.get('options', 'defaults')} | {r['recordBytes']} B | {r['shards']} | {r['mibPerSecond']} | "
                f"{r['fractionOfByteQuota']} | {r['getRecordsPerShardPerSecond']} | {r['throttledFraction']} |"
                for r in quota["runs"]]

    sink = results.get("writeUnderQuota") or {}
    out += ["", "## Write under quota (SinkQuotaBench)", ""]
    if sink.get("summary"):
        out += ["| mode | shards | tasks | keys | quota rec/s | achievable | delivered | of achievable | throttled | "
                "lost | duplicates |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        out += [f"| {r['mode']} | {r['shards']} | {r['tasks']} | {r['keys']} | {_num(r['quotaRecordsPerSecond'])} | "
                f"{_num(r['achievableRecordsPerSecond'])} | {_num(r['deliveredRecordsPerSecond'])} | "
                f"{_num(r['fractionOfAchievable'], 3)} | {_num(r['throttledFraction'], 3)} | {r['lost']} | "
                f"{r['duplicates']} |" for r in sink["summary"]]
    else:
        out.append(sink.get("note") or sink.get("error") or "not run")

    latency = results.get("latency") or {}
    if latency.get("runs"):
        out += ["", f"## End-to-end latency ({latency['shards']} shards, {latency['recordsPerSecond']} records/s, "
                f"{latency['seconds']:g} s per trigger)", "",
                "| trigger | records | p50 ms | p95 ms | p99 ms | max ms |", "|---|---|---|---|---|---|"]
        out += [f"| {r['name']} | {r['measured']} | {r['ms']['p50']} | {r['ms']['p95']} | {r['ms']['p99']} | "
                f"{r['ms']['max']} |" for r in latency["runs"]]

    scale = results.get("scale") or {}
    if scale.get("runs"):
        out += ["", f"## Scale (idle, then {scale['trafficRecordsPerSecond']} records/s; quotas on)", "",
                "| shards | phase | start s | triggers | batches | latestOffset ms median / max | "
                "queryPlanning ms median / max | triggerExecution ms median / max | ListShards / min |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in scale["runs"]:
            for phase in ("idle", "traffic"):
                p = r[phase]

                def dur(k: str, p: dict[str, Any] = p) -> str:
                    s = p["durationMs"].get(k)
                    return f"{_num(s['median'])} / {_num(s['max'])}" if s else "-"

                out.append(f"| {r['shards']} | {phase} | {r['startSeconds']} | {p['triggers']} | {p['batches']} | "
                           f"{dur('latestOffset')} | {dur('queryPlanning')} | {dur('triggerExecution')} | "
                           f"{p['listShardsPerMinute']} |")
    if plots:
        out += ["", "## Plots", ""] + [f"![{name}]({image_prefix}{path})" for name, path in plots.items()]
    return "\n".join(out) + "\n"


def plot(results: dict[str, Any], directory: Path, stem: str) -> dict[str, str]:
    """Throughput vs shards, latency distribution, flow-control trace; returns name → file name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}

    if (results.get("read") or {}).get("shapes") or (results.get("write") or {}).get("shapes"):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ax, section in zip(axes, ("read", "write")):
            shapes = (results.get(section) or {}).get("shapes", [])
            for size in sorted({s["recordBytes"] for s in shapes}):
                rows = sorted((s for s in shapes if s["recordBytes"] == size), key=lambda s: s["shards"])
                for key, style in (("connector", "-o"), ("rawSdk", "--s"), ("boto3", ":^")):
                    ax.plot([s["shards"] for s in rows], [s[key]["recordsPerSecond"] for s in rows], style,
                            label=f"{'sink' if section == 'write' and key == 'connector' else key}, {size} B")
            ax.set_xscale("log", base=2)
            ticks = sorted({s["shards"] for s in shapes})
            ax.set_xticks(ticks, [str(t) for t in ticks])
            ax.set_yscale("log")
            ax.set_xlabel("shards")
            ax.set_ylabel("records/s")
            ax.set_title(f"{section} throughput (quotas off)")
            ax.legend(fontsize=7)
        fig.tight_layout()
        files["throughput vs shards"] = f"{stem}-throughput.png"
        fig.savefig(directory / files["throughput vs shards"], dpi=100)
        plt.close(fig)

    latency = (results.get("latency") or {}).get("runs", [])
    if latency:
        fig, ax = plt.subplots(figsize=(7, 4))
        for r in latency:
            samples = sorted(r["samplesMs"])
            if samples:
                ax.plot(samples, [(i + 1) / len(samples) for i in range(len(samples))], label=f"trigger {r['name']}")
        ax.set_xscale("log")
        ax.set_xlabel("put → row in foreachBatch, ms")
        ax.set_ylabel("fraction of records")
        ax.set_title("end-to-end latency (CDF)")
        ax.legend()
        fig.tight_layout()
        files["latency distribution"] = f"{stem}-latency.png"
        fig.savefig(directory / files["latency distribution"], dpi=100)
        plt.close(fig)

    sink_runs = [r for r in (results.get("writeUnderQuota") or {}).get("runs", []) if r.get("trace")]
    if sink_runs:
        chosen: dict[str, dict[str, Any]] = {}
        for r in sink_runs:  # one run per mode: the first, preferring uniform keys
            if r["mode"] not in chosen or (chosen[r["mode"]].get("keys") != "uniform" and r.get("keys") == "uniform"):
                chosen[r["mode"]] = r
        fig, axes = plt.subplots(len(chosen), 1, figsize=(9, 2.6 * len(chosen)), squeeze=False)
        for ax, (mode, r) in zip(axes[:, 0], chosen.items()):
            pause = ax.twinx()
            for task in sorted({e.get("task", 0) for e in r["trace"]}):
                trace = sorted((e for e in r["trace"] if e.get("task", 0) == task), key=lambda e: e["t"])
                times = [e["t"] for e in trace]
                ax.step(times, [e["batch"] for e in trace], where="post", label=f"batch, task {task}")
                throttled = [e for e in trace if e.get("throttled")]
                ax.plot([e["t"] for e in throttled], [e["batch"] for e in throttled], "x", color="red", ms=4,
                        label="throttled" if task == 0 else None)
                pause.step(times, [e["pauseMs"] for e in trace], where="post", linestyle="--", alpha=0.8,
                           label=f"pause, task {task}")
            ax.set_ylabel("records / request")
            ax.set_ylim(0, 520)
            pause.set_ylabel("pause ms (dashed)")
            pause.set_ylim(0, max([1.0] + [float(e["pauseMs"]) for e in r["trace"]]) * 1.1)
            ax.set_title(f"{mode}: {r['shards']} shard(s), {r['tasks']} task(s), {r['keys']} keys")
            ax.legend(loc="lower left", fontsize=7)
            pause.legend(loc="lower right", fontsize=7)
        axes[-1, 0].set_xlabel("seconds since the run started")
        fig.tight_layout()
        files["flow-control trace"] = f"{stem}-flow-control.png"
        fig.savefig(directory / files["flow-control trace"], dpi=100)
        plt.close(fig)
    return files


DOC_INTRO = """# Benchmarks

`make bench` measures the connector against what it is built on, on the project's Kinesis simulator
(`localstack/simulator`), in one run so the comparisons share the machine's state:

1. **Read throughput** — a prefilled stream (100 B and 1 KiB records; 1, 4, 16 shards) drained by a
   `Trigger.AvailableNow` query into Spark's `noop` sink (wall time from `start()` to termination, records
   counted from the query's progress), against a raw AWS SDK for Java v2 GetRecords loop (the practical limit)
   and a boto3 loop (what a Python user writes by hand), quotas off.
2. **Write throughput** — `df.write.format("kinesis")` of a cached, pre-generated DataFrame against a raw SDK
   PutRecords loop (500-record batches, 4 threads) and a boto3 loop; records stored are counted by the simulator.
3. **Under quotas** — the source reading a backlog with the simulator's AWS quotas on: MiB/s as a fraction of
   2 MiB/s per shard, GetRecords/s per shard, throttled calls (simulator counters). The sink's write under quota
   comes from `SinkQuotaBench` (integration tests), folded into the results when it is on the branch.
4. **End-to-end latency** — a boto3 writer stamps the send time into each record; a `foreachBatch` stamps its
   arrival on the driver; default trigger and `ProcessingTime("100 milliseconds")`.
5. **Scale** — `StreamingQueryProgress.durationMs` per trigger and ListShards calls per minute for 10, 100 and
   1000 shards, idle and with light traffic.
6. **Memory** — heap peak of the driver JVM (in local mode also the executor) while the connector reads.

How the baselines run: the raw SDK loop uses the SDK classes the connector jar carries (relocated; same SDK
version, Apache HttpClient 5, CBOR), driven through py4j in the driver JVM, one round trip per API call; the
boto3 loops are single-threaded and stop after a few seconds (their rate is what they reached). Byte rates
count payload bytes (records × record size) for every contender. Every figure is a median over repetitions
(3 by default); the machine's load average is recorded with each repetition.

```bash
make bench                  # the full run (16 min measured on 2 cores, plus the build): bench/results/<UTC date>.*
BENCH_QUICK=1 make bench    # a short run (fewer shapes, 1 repetition): bench/results/<date>-quick.*
BENCH_REPS=1 make bench     # fewer repetitions
BENCH_STRICT=1 make bench   # exit non-zero when a target is missed
make bench-smoke            # the seconds-long smoke run `make test` also runs (bench/tests)
.venv/bin/python -m bench.run --mode quick --only readUnderQuota --quota-variant maxFetchRate=2   # one section
.venv/bin/python -m bench.run --render bench/results/<date>.json --docs docs/benchmarks.md       # re-render
```

`SinkQuotaBench` (integration tests) is run through sbt when its source is on the branch; otherwise the summary
says "SinkQuotaBench not available". `--sink-quota-json FILE` folds in a file it wrote earlier.

`make bench` fails only when the harness breaks (or with `BENCH_STRICT=1` on a missed target); misses are
listed as MISS in the summary, never hidden.

What shapes the figures (read them with the run's load in mind):

- **Source pacing.** The source keeps to AWS's per-shard read quota even when the endpoint enforces none: at
  most one GetRecords per shard per `minFetchPeriod` (200 ms) and, since 2026-11-22, calls spaced by the bytes
  read so a shard yields at most 2 MiB/s (about 20,000 records/s of 100 B; these options cannot be raised past
  the quota). The raw loop calls back to back on 4 threads. With quotas off the read ratio therefore compares a
  quota-bound reader with an unbound one: for 1 and 4 shards the connector's ceiling is the quota, not its code;
  only the 16-shard shape (32 MiB/s of quota) measures overhead, on 2 cores shared with the simulator. Each
  micro-batch is also a fetch job followed by the batch job.
- **Read under quota.** One GetRecords may return 10 MiB (10,000 records of 1 KiB); the shard then throttles
  until that debt is paid (5 s at 2 MiB/s), as on AWS. The rate is the bytes the simulator served over a 15 s
  window (per-shard counters), so one repetition can be off by a call at each end of the window; the median of
  the repetitions evens that out. A call-aligned figure (each shard from its first served call to its last) is
  kept in the JSON as `callAlignedFractionOfByteQuota`; it reads high when the source fetches in bursts.
  Throttled calls include the SDK's retries. Before the byte pacing (first run of 2026-11-22) 66–93 % of calls
  were throttled and 4 shards on `local[2]` read at about half the quota (one task per shard, tasks queueing for
  the 2 slots); the read-under-quota and read sections were measured again after both fixes.
- **Memory.** Heap used at its peak includes garbage not yet collected, so it follows the heap size the JVM was
  given (2 GiB here) more than the data read.

The latest results follow (copied from `bench/results/`).

"""


def docs(results: dict[str, Any], plots: dict[str, str], results_dir: str) -> str:
    summary = markdown(results, {k: f"{results_dir}/{v}" for k, v in plots.items()}, image_prefix="../")
    body = summary.split("\n", 1)[1]  # the summary's own title gives way to the page's
    return DOC_INTRO + f"## Latest run: {results['date']}\n" + body.replace("\n## ", "\n### ")
