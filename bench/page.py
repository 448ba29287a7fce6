"""docs/benchmarks.md, the results page: a headline table, the environment, the method in short, how to reproduce,
the known misses and the plots.

Each headline figure is the newest measurement of it. A bench run often measures a few sections only (`--only`), so
the figure comes from the newest results JSON in the results folder whose section measured it (full runs only; the
run being rendered counts whatever its mode), or from a row of bench/headline-extra.md when that row was measured
later (a run whose JSON was lost, figures that exist only in its log). A newer JSON always wins over the extra row,
so the hand-kept file goes out of use by itself as sections are run again."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.quota import fold_sink_quota
from bench.report import SHARD_SCALE_COSTS as _SHARD_SCALE_COSTS
from bench.report import targets

#: where the page lives relative to these, and what it links to (paths from docs/)
HISTORY, DESIGN, SOAK, METHOD = (
    "benchmarks/history.md",
    "design/performance.md",
    "dev/soak.md",
    "benchmarks/method.md",
)
MAX_LINES = 200
PLOT_KINDS = (
    ("throughput", "read and write throughput against shards (quotas off)"),
    ("latency", "end-to-end latency, micro-batches (CDF)"),
    ("flow-control", "the sink's flow control under the write quota (trace)"),
    ("shard-scale", "the driver's costs against shards, up to 10,000"),
)


@dataclass(frozen=True)
class Source:
    """Where figures come from: a results JSON (`results`), or a run described in the extras file."""

    path: Path
    started: str  # ISO 8601, UTC: newer wins
    results: dict[str, Any] | None = None
    commit: str | None = None
    note: str = ""

    @property
    def label(self) -> str:
        return self.path.stem


@dataclass(frozen=True)
class Cell:
    measured: str
    verdict: str
    source: Source | None


Measure = Callable[[dict[str, Any]], tuple[str, str]]


@dataclass(frozen=True)
class Figure:
    key: str
    group: str
    label: str
    target: str
    section: str | None  # the results section that measures it (None: never measured by the harness)
    measure: Measure | None = None
    limits: str = ""  # what limits it, shown when it misses


def _fold(verdicts: Iterable[str]) -> str:
    """Several verdicts as one: any MISS misses; a figure nothing judged is NOT RUN."""
    found = set(verdicts)
    return "MISS" if "MISS" in found else "PASS" if "PASS" in found else "NOT RUN"


def _verdict(results: dict[str, Any], prefix: str, shape: str = "") -> str:
    """The harness's own verdicts (report.targets) for one target, over every shape it judged."""
    return _fold(t["verdict"] for t in targets(results) if t["target"].startswith(prefix) and shape in t["shape"])


def _span(values: Iterable[float], fmt: str = "{:.3f}") -> str:
    vs = sorted(values)
    return fmt.format(vs[0]) if vs[0] == vs[-1] else f"{fmt.format(vs[0])}–{fmt.format(vs[-1])}"


def _ms(v: float) -> str:
    return f"{v:,.0f}"


def _read_polling(r: dict[str, Any]) -> tuple[str, str]:
    judged = [s for s in r["pacedRead"]["shapes"] if not s.get("backlogExhausted")]
    at_quota = [s["connector"]["fractionOfByteQuota"] for s in judged if s["pacedSdk"]["fractionOfByteQuota"] >= 0.97]
    ratios = [s["ratioToPacedSdk"] for s in judged if s.get("ratioToPacedSdk") is not None]
    shards = sorted({s["shards"] for s in judged})
    verdict = _fold((_verdict(r, "read under quota ≥ 0.95×"), _verdict(r, "read ≥ 0.97 of quota")))
    return (
        f"{_span(at_quota)} of the quota where the paced loop reaches 0.97; {_span(ratios)}× a raw SDK loop paced "
        f"to the quota ({len(judged)} shapes, {shards[0]}–{shards[-1]} shards × 100 B / 1 KiB)",
        verdict,
    )


def _read_efo(r: dict[str, Any]) -> tuple[str, str]:
    readers = r["fanOut"]["throughput"]["modes"]["efo"]
    return (
        f"{', '.join(str(x['perShardFractionOfQuota']) for x in readers)} of 2 MiB/s per shard, "
        f"{len(readers)} consumers at once",
        _verdict(r, "EFO read ≥"),
    )


def _adaptive(r: dict[str, Any], keys: str) -> list[dict[str, Any]]:
    return [s for s in r["writeUnderQuota"].get("summary", []) if s["mode"] == "adaptive" and s["keys"] == keys]


def _write_uniform(r: dict[str, Any]) -> tuple[str, str]:
    rows = _adaptive(r, "uniform")
    return (
        f"{_span(s['fractionOfAchievable'] for s in rows)} of what the shards take, "
        f"{_span((s['throttledFraction'] * 100 for s in rows), '{:.1f}')} % throttled ({len(rows)} shapes, "
        f"{min(s['shards'] for s in rows)}–{max(s['shards'] for s in rows)} shards, 1–2 tasks)",
        _verdict(r, "write (adaptive)", "uniform"),
    )


def _write_hot(r: dict[str, Any]) -> tuple[str, str]:
    [s] = _adaptive(r, "hot")
    return (
        f"{s['fractionOfAchievable']:.3f} of what the shards take, {s['throttledFraction'] * 100:.1f} % throttled "
        f"({s['shards']} shards, {s['tasks']} tasks)",
        _verdict(r, "write (adaptive)", "hot"),
    )


def _write_executors(r: dict[str, Any]) -> tuple[str, str]:
    rows = r["sinkCluster"]["rows"]
    several = [x for x in rows if x.get("executors", 1) > 1 and x.get("start") == "shares"]
    rates = [x["ofQuota"] for x in several if x.get("ofQuota") is not None]

    def throttled(xs: list[dict[str, Any]]) -> str:
        return _span((x["throttledFraction"] * 100 for x in xs), "{:.1f}")

    # The same run's unpaced start and single executor: what the shares change, and what one JVM's pace does.
    beside = [
        f"{label} {throttled(xs)} %"
        for label, xs in (
            ("unpaced start", [x for x in rows if x.get("start") == "unpaced"]),
            ("one executor", [x for x in rows if x.get("executors", 1) == 1]),
        )
        if xs
    ]
    return (
        f"{_span(rates)} of what the shards take, {throttled(several)} % throttled ({len(several)} writes)"
        + (f"; same run: {', '.join(beside)}" if beside else ""),
        _verdict(r, "several executors"),
    )


def _rates(r: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["mode"]: t for t in r["aggregation"]["throughput"]}


def _kpl_speedup(r: dict[str, Any]) -> tuple[str, str]:
    rates = _rates(r)
    return (
        f"{r['aggregation']['speedup']}× ({rates['kpl']['userRecordsPerSecond']:,} against "
        f"{rates['none']['userRecordsPerSecond']:,} user records/s)",
        _verdict(r, "aggregation=kpl user records/s"),
    )


def _kpl_throttled(r: dict[str, Any]) -> tuple[str, str]:
    kpl = _rates(r)["kpl"]
    return (
        f"{kpl['windowThrottledFraction'] * 100:.1f} % of attempts after warm-up (whole write "
        f"{kpl['throttledFraction'] * 100:.1f} %)",
        _verdict(r, "aggregation=kpl throttled"),
    )


def _kpl_latency(r: dict[str, Any]) -> tuple[str, str]:
    lat = {x["mode"]: x for x in r["aggregation"]["latency"]}
    return (
        f"p50 {_ms(lat['kpl']['ms']['p50'])} ms (plain {_ms(lat['none']['ms']['p50'])} ms) at 50 rows/s",
        _verdict(r, "aggregation=kpl p50"),
    )


def _micro_batch(r: dict[str, Any]) -> tuple[str, str]:
    runs = r["latency"]["runs"]
    return (
        f"p50 {' / '.join(_ms(x['ms']['p50']) for x in runs)} ms, p99 "
        f"{' / '.join(_ms(x['ms']['p99']) for x in runs)} ms ({' / '.join(x['name'] for x in runs)} trigger)",
        _verdict(r, "p50 latency ≤ 1 s"),
    )


def _efo_micro_batch(r: dict[str, Any]) -> tuple[str, str]:
    [x] = [x for x in r["fanOut"]["latency"] if x["mode"] == "efo" and x["name"] == "processingTime=100ms"]
    return f"p50 {_ms(x['ms']['p50'])} ms, p99 {_ms(x['ms']['p99'])} ms", _verdict(r, "EFO p50 put→row")


def _real_time(mode: str) -> Measure:
    def measure(r: dict[str, Any]) -> tuple[str, str]:
        runs = [x for x in r["realTime"]["runs"] if x["trigger"] == "realTime" and x["mode"] == mode]
        p50, p99 = (" / ".join(_ms(x["ms"][q]) for x in runs) for q in ("p50", "p99"))
        rates = " / ".join(f"{x['recordsPerSecond']:,}" for x in runs)
        limit = 300 if mode == "polling" else 150
        return (
            f"p50 {p50} ms, p99 {p99} ms at {rates} records/s",
            _verdict(r, f"real-time mode p99 put→row ≤ {limit} ms ({mode})"),
        )

    return measure


def _busy_1000(r: dict[str, Any]) -> tuple[str, str]:
    data = r["manyShards"]
    window = data.get("trafficSteady") or data["traffic"]
    when = f", {window['secondsAfterStart'] / 60:.0f} min into the traffic" if "secondsAfterStart" in window else ""
    return (
        f"p50 {_ms(window['ms']['p50'])} ms, p95 {_ms(window['ms']['p95'])} ms{when}",
        _verdict(r, "p50 put→row ≤ 1 s, all shards busy"),
    )


def _after_lull(r: dict[str, Any]) -> tuple[str, str]:
    a = r["lull"]["afterLull"]
    return (
        f"p50 {_ms(a['ms']['p50'])} ms, max {_ms(a['ms']['max'])} ms over {a['lulls']} silences; "
        f"{a['getRecordsPerSecondWhileSilent']} GetRecords/s while silent",
        _verdict(r, "p50 after a lull"),
    )


def _sparse(r: dict[str, Any]) -> tuple[str, str]:
    w = r["lull"]["sparse"]
    return (
        f"p50 {_ms(w['ms']['p50'])} ms, p95 {_ms(w['ms']['p95'])} ms; {w['getRecordsPerSecondIdle']} GetRecords/s "
        "while silent",
        _verdict(r, "p50 sparse traffic"),
    )


def _idle_cpu(r: dict[str, Any]) -> tuple[str, str]:
    data = r["manyShards"]
    idle = data.get("idleSteady") or data["idle"]
    cpu, jit = idle["cpu"]["fractionOfOneCore"], idle["cpu"].get("jitFractionOfOneCore") or 0.0
    when = f", {idle['secondsAfterStart'] / 60:.0f} min after the start" if "secondsAfterStart" in idle else ""
    verdict = _fold((_verdict(r, "idle driver CPU"), _verdict(r, "idle trigger median")))
    return (
        f"{(cpu - jit) * 100:.1f} % of a core without the JIT ({cpu * 100:.1f} % with){when}; idle trigger median "
        f"{_ms(idle['triggerExecutionMs']['median'])} ms",
        verdict,
    )


def _shard_scale(r: dict[str, Any]) -> tuple[str, str]:
    from bench.shard_scale import figures, slopes

    big = [x for x in r["shardScale"]["runs"] if x["shards"] == 10000]
    if not big:
        return "no 10,000-shard shape in the run", "NOT RUN"
    f = figures(big[0])
    growth = slopes(r["shardScale"]["runs"])
    worst = max((v["steepest"], k) for k, v in growth.items() if v["steepest"] is not None and k in _SHARD_SCALE_COSTS)
    return (
        f"p50 {_ms(f['p50Ms'])} ms, idle CPU {f['idleCpuFraction'] * 100:.1f} % of a core, heap "
        f"{f['heapAfterFullGcMiB']:.0f} MiB, offset entry {f['offsetFileBytes'] / 1024:.0f} KiB; steepest cost "
        f"growth: {_SHARD_SCALE_COSTS[worst[1]]} ^{worst[0]}",
        _fold((_verdict(r, "10,000 shards"), _verdict(r, "per-shard costs"))),
    )


def _memory(r: dict[str, Any]) -> tuple[str, str]:
    from bench.report import memory_excess_mib

    data = r["memory"]
    child = data["child"]
    return (
        f"{'completed' if data['completed'] else 'not completed'}; live heap {memory_excess_mib(child)} MiB beyond a "
        f"{int(child['fetchBufferSize']) // 1048576} MiB fetchBufferSize",
        _verdict(r, "backlog drained with a 1 GiB"),
    )


def _batch_read(r: dict[str, Any]) -> tuple[str, str]:
    runs = r["batchRead"]["runs"]
    once, today = runs["oneRead"], runs["today"]
    return (
        f"{once['servedToStored']}× the bytes stored at {once['fractionOfByteQuota']} of the read quota "
        f"(today's planning: {today['servedToStored']}× at {today['fractionOfByteQuota']})",
        _fold((_verdict(r, "batch read: GetRecords"), _verdict(r, "batch read ≥"))),
    )


def _rereads(r: dict[str, Any]) -> tuple[str, str]:
    return f"{r['localCluster']['servedToStored']}× the bytes stored", _verdict(r, "GetRecords bytes ≤ 1.05×")


def _cpu_vs_sdk(r: dict[str, Any]) -> tuple[str, str]:
    judged = [s for s in r["cpuPerRecord"]["shapes"] if s.get("judged", True)]
    parts = [
        f"{(s.get('steadyRatioToBracketWithoutJit') or s.get('steadyRatioWithoutJit')):.2f}× at "
        f"{'1 KiB' if s['recordBytes'] == 1024 else str(s['recordBytes']) + ' B'} × {s['shards']} shards"
        for s in judged
    ]
    return "; ".join(parts), _verdict(r, "CPU per record")


def _write_vs_sdk(r: dict[str, Any]) -> tuple[str, str]:
    shapes = r["write"]["shapes"]
    return (
        f"{_span((s['ratioToRawSdk'] for s in shapes), '{:.2f}')}× ({len(shapes)} shapes, 1–16 shards × 100 B / 1 KiB)",
        _verdict(r, "write ≥ 0.9× raw SDK"),
    )


THROUGHPUT, LATENCY, COST = (
    "Throughput against the quotas",
    "Latency, put → row",
    "Cost, memory, and against the raw SDK",
)
FIGURES: tuple[Figure, ...] = (
    Figure(
        "read-polling",
        THROUGHPUT,
        "Read, polling",
        "≥ 0.97 of 2 MiB/s per shard; ≥ 0.95× the paced loop",
        "pacedRead",
        _read_polling,
        "two cores do not read 64 shards' quota",
    ),
    Figure(
        "read-efo",
        THROUGHPUT,
        "Read, enhanced fan-out",
        "≥ 0.95 of 2 MiB/s per shard, each consumer",
        "fanOut",
        _read_efo,
    ),
    Figure(
        "write-quota",
        THROUGHPUT,
        "Write, plain records (adaptive flow control)",
        "≥ 0.95 of what the shards take, ≤ 5 % throttled",
        "writeUnderQuota",
        _write_uniform,
    ),
    Figure(
        "write-quota-hot",
        THROUGHPUT,
        "Write, plain records, one hot shard",
        "≥ 0.95 of what the shards take, ≤ 5 % throttled",
        "writeUnderQuota",
        _write_hot,
        "writer tasks of one executor share a shard's pace; writers in different executors still pace it "
        "apart, each finding its share alone",
    ),
    Figure(
        "write-executors",
        THROUGHPUT,
        "Write from 2–3 executors (`local-cluster`), 4 and 16 shards, plain and `aggregation=kpl`",
        "≥ 0.95 of what the shards take, ≤ 5 % throttled",
        "sinkCluster",
        _write_executors,
        "each executor starts at its share of a shard's quota, then paces it apart; what is left is each pace's "
        "own probing in a 10-20 s write (one executor is throttled about as much in the same run), and a refused "
        "aggregate is a whole request, so `aggregation=kpl` overshoots by more per refusal",
    ),
    Figure(
        "write-kpl",
        THROUGHPUT,
        "Write, `aggregation=kpl`, against plain writes",
        "≥ 8× the user records/s",
        "aggregation",
        _kpl_speedup,
    ),
    Figure(
        "write-kpl-throttled",
        THROUGHPUT,
        "Write, `aggregation=kpl`, attempts refused",
        "≤ 5 % after warm-up",
        "aggregation",
        _kpl_throttled,
        "each probe past a shard's quota costs at least one refused aggregate per "
        "writer, and an aggregate is large (50 KiB by default; 24 KiB measured 3.4–4.0 %)",
    ),
    Figure(
        "latency-micro-batch",
        LATENCY,
        "Micro-batch, polling (2 shards, 200 records/s)",
        "p50 ≤ 1 s",
        "latency",
        _micro_batch,
    ),
    Figure(
        "latency-efo-micro-batch",
        LATENCY,
        "Micro-batch, enhanced fan-out, 100 ms trigger",
        "p50 ≤ 150 ms",
        "fanOut",
        _efo_micro_batch,
        "the micro-batch itself: the trigger, a snapshot job and the batch's job",
    ),
    Figure(
        "latency-real-time-polling",
        LATENCY,
        "Real-time mode, polling (4 shards)",
        "p99 ≤ 300 ms",
        "realTime",
        _real_time("polling"),
        "a shard is polled every 200 ms (5 calls a second per shard)",
    ),
    Figure(
        "latency-real-time-efo",
        LATENCY,
        "Real-time mode, enhanced fan-out (4 shards)",
        "p99 ≤ 150 ms",
        "realTime",
        _real_time("efo"),
    ),
    Figure(
        "latency-1000",
        LATENCY,
        "Micro-batch, 1000 shards, a record per shard per second",
        "p50 ≤ 1 s",
        "manyShards",
        _busy_1000,
        "Spark's two checkpoint writes per trigger and a machine whose two cores are busy while the traffic runs",
    ),
    Figure(
        "latency-lull",
        LATENCY,
        "Micro-batch, the first record after a 60 s silence (4 shards)",
        "p50 ≤ 1 s",
        "lull",
        _after_lull,
    ),
    Figure(
        "latency-sparse",
        LATENCY,
        "Micro-batch, 1000 silent shards, then a record every 1.5 s on a random shard",
        "p50 ≤ 1.5 s",
        "lull",
        _sparse,
        "the idle budget (500 empty GetRecords a second per executor): each of 1000 idle shards is polled every 2 s, "
        "so a record waits a second on average for its shard's next poll; `maxIdlePollInterval` lowers it at a CPU "
        "cost",
    ),
    Figure("latency-kpl", LATENCY, "`aggregation=kpl` write, then read back", "p50 ≤ 1 s", "aggregation", _kpl_latency),
    Figure(
        "idle-1000",
        COST,
        "Idle cost, 1000 shards (driver CPU)",
        "≤ 10 % of a core; idle trigger ≤ 300 ms",
        "manyShards",
        _idle_cpu,
        "the SDK's cost of the idle budget's 500 empty GetRecords a second and Spark's own driver "
        "threads; the figure moves with the machine by a point or two between runs",
    ),
    Figure(
        "shards-10000",
        COST,
        "10,000 shards on one driver (a record a second on 1000 of them)",
        "p50 ≤ 1 s, idle CPU ≤ 25 % of a core, heap ≤ 1 GiB, every cost linear or better",
        "shardScale",
        _shard_scale,
        "the start, between neighbouring shapes: 0.4 s at 2,500 shards, 1.0 s at 5,000 (its three starts 0.5-1.5 s), "
        "so 1.32 between those two; from 5,000 to 10,000 it grew 0.58 (1.0 -> 1.5 s), every shard answered 0.9 "
        "(0.68 -> 1.27 s) and every other cost at most 0.68 but the offset log entry (1.0, by its nature). A new query's first snapshot waits for shards' first answers "
        "(two calls each) at most a second since 2026-12-06 (was 2 s, which 10,000 shards always reached). The run "
        "before (same connector) put every shard's first answer at 1.14 -> 3.54 s (1.63): the simulator searched "
        "its list of shards and trimmed every shard on each call, so its calls grew costlier with the shards; now "
        "it finds a shard by id. p50 at 10,000 no longer depends on the machine's speed: calls slowed to 50 ms "
        "(`--shard-scale-call-latency-ms 50`) gave 2.95 s with 32 call slots, 275 ms with slots that follow the "
        "shards (2026-12-06-shard-scale-10000-*)",
    ),
    Figure(
        "memory",
        COST,
        "Memory bound: 1 GiB driver drains 64 × 20 MiB of 10 KiB records",
        "completes; live heap ≤ `fetchBufferSize` + 64 MiB",
        "memory",
        _memory,
    ),
    Figure(
        "batch-read",
        COST,
        "Batch read of 16 × 32 MiB (`fetchBufferSize` default): bytes read against bytes stored, read rate",
        "≤ 1.05×; ≥ 0.9 of the read quota",
        "batchRead",
        _batch_read,
        "each shard's read quota: a task reads all its ranges at once and takes their records in turns "
        "(1,000 each), so the rate is the shards' quota when planning is done; handed out one range after "
        "another (until 2026-11-29) it stopped at 0.56, what did not fit in `fetchBufferSize` read at one "
        "shard's quota per task; the plan's wait for Kinesis' clock (about 1.5 s) and Spark's job start "
        "come before the first byte and are left out of the rate",
    ),
    Figure(
        "rereads",
        COST,
        "Bytes read on `local-cluster` (2 executors) against bytes stored",
        "≤ 1.05×",
        "localCluster",
        _rereads,
    ),
    Figure(
        "cpu-vs-sdk",
        COST,
        "Read CPU per record against a raw SDK GetRecords loop (steady, without JIT)",
        "≤ 1.2×",
        "cpuPerRecord",
        _cpu_vs_sdk,
        "Spark's fixed cost per micro-batch spread over the records a batch brings",
    ),
    Figure(
        "write-vs-sdk",
        COST,
        "Write rate against a raw SDK PutRecords loop (quotas off)",
        "≥ 0.9×",
        "write",
        _write_vs_sdk,
        "single writes spread by ±20 % on two shared cores",
    ),
    Figure("aws-labs", COST, "Against the AWS Labs connector", "–", None),
)


def load_sources(
    results_dir: Path, current: dict[str, Any] | None = None, runs: dict[str, tuple[str, str]] | None = None
) -> list[Source]:
    """Every full run's results JSON in `results_dir` (SinkQuotaBench's own files as the `writeUnderQuota` section),
    plus `current` whatever its mode. `runs` gives commits and notes by file name where a JSON has none."""
    runs = runs or {}
    sources: list[Source] = []
    current_path: Path | None = None
    for path in sorted(results_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        commit, note = runs.get(path.name, (None, ""))
        if re.fullmatch(r"\d{4}-\d\d-\d\d-sink-quota\.json", path.name) and "runs" in data:  # a full run's
            date = path.name[:10]
            results = {"date": date, "writeUnderQuota": fold_sink_quota(data)}
            sources.append(Source(path, f"{date}T00:00:00+00:00", results, commit, note))
        elif "settings" in data and data["settings"].get("mode") == "full":
            if current is not None and data.get("startedAt") == current.get("startedAt"):
                current_path = path  # the run being rendered (`--render` names files as it likes), added below
                continue
            sources.append(
                Source(
                    path,
                    data.get("startedAt") or f"{data['date']}T00:00:00+00:00",
                    data,
                    data.get("machine", {}).get("commit") or commit,
                    note,
                )
            )
    if current is not None:
        from bench.run import output_stem

        path = current_path or results_dir / f"{output_stem(current)}.json"
        sources.append(
            Source(
                path,
                current.get("startedAt") or f"{current['date']}T00:00:00+00:00",
                current,
                current.get("machine", {}).get("commit") or runs.get(path.name, (None, ""))[0],
                runs.get(path.name, (None, ""))[1],
            )
        )
    return sources


@dataclass(frozen=True)
class Extras:
    """bench/headline-extra.md: figures by key, each with the run it comes from, and commits of runs by file."""

    rows: dict[str, tuple[str, str, Source]]
    runs: dict[str, tuple[str, str]]
    edited: str


def _tables(text: str) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def load_extras(path: Path, repo: Path) -> Extras:
    """Reads the hand-kept file: a table `key | measured | verdict | started (UTC) | source` and a table
    `file | commit | note`. A missing file is no extras."""
    if not path.is_file():
        return Extras({}, {}, "")
    text = path.read_text()
    match = re.search(r"[Ll]ast edited (\d{4}-\d{2}-\d{2})", text)
    edited = match.group(1) if match else ""
    rows: dict[str, tuple[str, str, Source]] = {}
    runs: dict[str, tuple[str, str]] = {}
    for table in _tables(text):
        header, body = [h.lower() for h in table[0]], table[1:]
        if header[:3] == ["key", "measured", "verdict"]:
            for key, measured, verdict, started, source in (r[:5] for r in body):
                rows[key] = (measured, verdict, Source(repo / source.strip("`"), started, None))
        elif header[:2] == ["file", "commit"]:
            for file, commit, note in (r[:3] for r in body):
                runs[file.strip("`")] = (commit.strip("`"), note)
    rows = {
        k: (m, v, Source(s.path, s.started, None, *runs.get(s.path.name, (None, "")))) for k, (m, v, s) in rows.items()
    }
    return Extras(rows, runs, edited)


def _newest_with(sources: list[Source], section: str) -> Source | None:
    """The newest source whose `section` measured something (an error or a skipped section measured nothing) and
    may be a headline."""
    having = [
        s
        for s in sources
        if s.results
        and isinstance(s.results.get(section), dict)
        and not {"error", "skipped"} & set(s.results[section])
        and s.results[section].get("available", True)
        and s.results[section].get("headline", True)  # a probe of chosen shapes (bench/run.py --shard-scale-shards)
    ]
    return max(having, key=lambda s: s.started, default=None)


def headline(sources: list[Source], extras: Extras) -> dict[str, Cell]:
    cells: dict[str, Cell] = {}
    for f in FIGURES:
        cell = Cell("not measured", "–", None)
        src = _newest_with(sources, f.section) if f.section else None
        if src is not None and f.measure is not None:
            try:
                cell = Cell(*f.measure(src.results or {}), src)
            except (KeyError, ValueError, TypeError, IndexError, ZeroDivisionError):
                cell = Cell("not measured in its newest run", "NOT RUN", src)
        if f.key in extras.rows:
            measured, verdict, extra = extras.rows[f.key]
            if src is None or extra.started > src.started:
                cell = Cell(measured, verdict, extra)
        cells[f.key] = cell
    return cells


def _link(path: Path, page_dir: Path, text: str | None = None) -> str:
    target = path.with_suffix(".md") if path.suffix == ".json" and path.with_suffix(".md").is_file() else path
    return f"[{text or path.stem}]({os.path.relpath(target, page_dir)})"


def _when(started: str) -> str:
    return started[:16].replace("T", " ") + " UTC" if "T" in started and started[11:16] != "00:00" else started[:10]


def _full_run(sources: list[Source], extras: Extras, page_dir: Path) -> str:
    """How long the newest run of every section took, from its JSON or the extras' `full-run` row."""
    from bench.run import SECTIONS

    whole = [
        s
        for s in sources
        if s.results
        and all(k in s.results for k in SECTIONS)
        and s.results.get("settings", {}).get("mode") == "full"
        and s.results.get("elapsedSeconds")
    ]
    best = max(whole, key=lambda s: s.started, default=None)
    extra = extras.rows.get("full-run")
    if extra and (best is None or extra[2].started > best.started):
        return f"{extra[0]} ({_link(extra[2].path, page_dir, extra[2].label)})"
    if best is None:
        return "not recorded"
    results = best.results or {}
    return (
        f"{results['elapsedSeconds'] / 60:.0f} min on {results['machine']['cpuCount']} cores "
        f"({_link(best.path, page_dir)})"
    )


def render(
    results_dir: Path,
    page_path: Path,
    *,
    current: dict[str, Any] | None = None,
    extras: Extras | None = None,
    extras_path: Path | None = None,
) -> str:
    extras = extras or Extras({}, {}, "")
    sources = load_sources(results_dir, current, extras.runs)
    cells = headline(sources, extras)
    page_dir = page_path.parent.resolve()
    used: dict[Path, Source] = {c.source.path: c.source for c in cells.values() if c.source is not None}

    out = [
        "# Benchmarks",
        "",
        "<!-- Generated by `make bench` (bench/page.py); do not edit: run "
        "`python -m bench.run --render bench/results/<date>.json --docs docs/benchmarks.md`. -->",
        "",
        "What the connector measures against Kinesis' quotas, against the AWS SDK it is built on, and what it "
        "costs. **Every figure is measured on the project's local Kinesis simulator on a 2-core machine, not on "
        "AWS**: the simulator enforces AWS's per-shard quotas, but network, service latency and AWS's own "
        "behaviour under load are not in these figures. Ratios measured within one run transfer better than "
        "absolute rates.",
        "",
        f"Each figure is the latest measurement of it; *run* names the run it comes from (a section not run in "
        f"the newest run keeps its figure from the newest run that has it). Dated lab notes, how each figure got "
        f"where it is: [history]({HISTORY}). Why the engine is shaped as it is and what limits each figure: "
        f"[performance design]({DESIGN}). The chaos soak (exactly-once and key order under faults): "
        f"[soak]({SOAK}).",
        "",
        "## Headline",
        "",
    ]
    for group in (THROUGHPUT, LATENCY, COST):
        out += [f"### {group}", "", "| figure | measured | target | verdict | run |", "|---|---|---|---|---|"]
        for f in (f for f in FIGURES if f.group == group):
            c = cells[f.key]
            verdict = f"**{c.verdict}**" if c.verdict in ("PASS", "MISS") else c.verdict
            run = _link(c.source.path, page_dir, c.source.label) if c.source else "–"
            out.append(f"| {f.label} | {c.measured} | {f.target} | {verdict} | {run} |")
        out.append("")

    out += _modes(sources, page_dir)
    newest = max(
        (s for s in used.values() if s.results and "machine" in s.results), key=lambda s: s.started, default=None
    )
    m = (newest.results or {}).get("machine", {}) if newest else {}
    out += [
        "## Environment",
        "",
        "- **Where**: the project's Kinesis simulator (`localstack/simulator`), a local JVM process on the same "
        "machine as Spark, with AWS's per-shard quotas on or off per section. **A local simulator, not AWS.**",
        f"- **Machine**: {m.get('cpuCount', '?')} cores ({m.get('cpuModel', '?')}), {m.get('memoryGiB', '?')} GiB, "
        "a shared VM whose host changed between runs; the load average is recorded with each run.",
        f"- **Versions**: Spark {m.get('spark', '?')} (`local[2]`), Java {m.get('java', '?')}, AWS SDK for Java "
        f"{m.get('awsSdkJava', '?')}, boto3 {m.get('boto3', '?')}, connector {m.get('connector', '?')}.",
        "- **Runs** the headline comes from:",
    ]
    for s in sorted(used.values(), key=lambda s: s.started, reverse=True):
        what = (
            f"{s.results['settings']['mode']} mode"
            if s.results and "settings" in s.results
            else "SinkQuotaBench's own file"
            if s.results
            else "the lines the run printed"
        )
        load = (s.results or {}).get("machine", {}).get("load1AtStart")
        out.append(
            f"  - {_link(s.path, page_dir, s.label)}: started {_when(s.started)}, commit "
            f"{f'`{s.commit}`' if s.commit else 'not recorded'}, {what}"
            + (f", load {load} at its start" if load is not None else "")
            + (f"; {s.note}" if s.note else "")
        )
    if extras_path is not None and any(c.source is not None and c.source.results is None for c in cells.values()):
        out.append(
            f"  - rows from a run without a results JSON are kept by hand in "
            f"{_link(extras_path, page_dir, extras_path.name)}"
            + (f" (last edited {extras.edited})" if extras.edited else "")
            + "."
        )
    out += [
        "",
        "## Method",
        "",
        "One process runs every section against one simulator, so comparisons share the machine's state "
        "([full method](" + METHOD + ")). In short:",
        "",
        "- **Against the quota**: a prefilled backlog read with the simulator's AWS quotas on; the rate is the "
        "simulator's served bytes over a 15 s window, as a fraction of 2 MiB/s per shard, beside a raw AWS SDK "
        "GetRecords loop paced to the same quota. Writes: `SinkQuotaBench` (the sink under the write quota, "
        "uniform and hot keys) and the `aggregation` section (100 B records on 4 shards, 1000 keys).",
        "- **Latency**: a boto3 writer stamps the send time into each record; the query stamps its arrival "
        "(micro-batch: in `foreachBatch` on the driver; real-time mode: in the task); p50/p99 over 20–30 s.",
        "- **Against the raw SDK**: the same SDK classes the connector carries, driven in the driver JVM; CPU is "
        "the driver JVM's process CPU time per record, steady state, without the JIT compiler threads.",
        "- **Idle cost**: one 1000-shard stream, quotas on, no traffic; the driver's CPU over 30 s, six minutes "
        "after the query started.",
        "- **Memory**: a child driver with a 1 GiB heap drains 1.25 GiB; the live heap (after a forced full "
        "collection, every 3 s) against `fetchBufferSize`.",
        "- Figures are medians over repetitions (3 by default, 5 for writes).",
        "",
        "## Reproduce",
        "",
        f"The latest run of every section took {_full_run(sources, extras, page_dir)}, plus the build.",
        "",
        "```bash",
        "make bench                   # every section: bench/results/<UTC date>.{json,md,png} and this page",
        "BENCH_QUICK=1 make bench     # a short run (fewer shapes, 1 repetition): <date>-quick.*",
        "BENCH_STRICT=1 make bench    # exit 2 when a target is missed",
        ".venv/bin/python -m bench.run --only manyShards,memory --docs docs/benchmarks.md  # some sections",
        ".venv/bin/python -m bench.run --render bench/results/<date>.json --docs docs/benchmarks.md  # re-render",
        "make bench-smoke             # the harness's smoke test (also in make test)",
        "```",
        "",
        "Sections (`--only`): `read`, `write`, `readUnderQuota`, `pacedRead`, `cpuPerRecord`, `writeUnderQuota`, "
        "`aggregation`, `latency`, `lull`, `fanOut`, `realTime`, `scale`, `manyShards`, `shardScale`, `memory`, `batchRead`, "
        "`localCluster`; `--shard-scale-shards 10000,20000` runs `shardScale` on chosen shapes (above 10,000: "
        "several streams of 10,000, one query), and `--shard-scale-call-latency-ms 50` answers every GetRecords 50 ms "
        "later (a slower endpoint): probes the headline does not take. A miss "
        "never fails `make bench` unless `BENCH_STRICT=1`; each run's summary (`bench/results/<date>.md`) lists "
        "every target and shape.",
        "",
        "## Known misses",
        "",
    ]
    misses = [f for f in FIGURES if cells[f.key].verdict == "MISS"]
    for f in misses:
        c = cells[f.key]
        out.append(
            f"- **{f.label}**: {c.measured} against {f.target}"
            + (f" ({c.source.label})" if c.source else "")
            + (f". What limits it: {f.limits}" if f.limits else "")
            + f" ([why]({DESIGN}#what-limits-each-figure))."
        )
    if not misses:
        out.append("None in the latest measurement of each headline figure.")
    out += [
        "",
        "Not measured: the AWS Labs connector (no run of it on the simulator yet), and anything on AWS itself.",
        "",
        "## Plots",
        "",
    ]
    plots = _plots(results_dir)
    for kind, caption in PLOT_KINDS:
        if kind in plots:
            out.append(f"![{caption}, {plots[kind].name[:10]}]({os.path.relpath(plots[kind].resolve(), page_dir)})")
    if not plots:
        out.append("No plots in the results folder.")
    out.append("")
    return "\n".join(out)


def _modes(sources: list[Source], page_dir: Path) -> list[str]:
    """The sink's flow-control modes side by side, from the newest SinkQuotaBench run (docs/writing.md links here
    for how they compare)."""
    src = _newest_with(sources, "writeUnderQuota")
    summary = ((src.results or {}).get("writeUnderQuota") or {}).get("summary", []) if src else []
    modes = list(dict.fromkeys(r["mode"] for r in summary))
    if not src or not modes:
        return []
    out = [
        "### The sink's flow-control modes under the write quota",
        "",
        f"`SinkQuotaBench` ({_link(src.path, page_dir, src.label)}): the fraction of what the shards can take, and "
        "of record attempts refused as throttled; `adaptive` is the default.",
        "",
        "| mode | uniform keys: delivered | uniform keys: throttled | hot shard: delivered / throttled |",
        "|---|---|---|---|",
    ]
    for mode in modes:
        uniform = [r for r in summary if r["mode"] == mode and r["keys"] == "uniform"]
        hot = [r for r in summary if r["mode"] == mode and r["keys"] == "hot"]
        out.append(
            f"| `{mode}` | {_span(r['fractionOfAchievable'] for r in uniform)} | "
            f"{_span((r['throttledFraction'] * 100 for r in uniform), '{:.1f}')} % | "
            + (f"{hot[0]['fractionOfAchievable']:.3f} / {hot[0]['throttledFraction'] * 100:.1f} %" if hot else "–")
            + " |"
        )
    return out + [""]


def _plots(results_dir: Path) -> dict[str, Path]:
    """The newest PNG of each kind (named <stem>-<kind>.png by report.plot)."""
    found: dict[str, Path] = {}
    for kind, _ in PLOT_KINDS:
        files = sorted(results_dir.glob(f"*-{kind}.png"), key=lambda p: p.name)
        if files:
            found[kind] = files[-1]
    return found
