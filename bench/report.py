"""Results → targets (PASS/MISS), a run's markdown summary (bench/results/<stem>.md) and the PNG plots; the docs page
(docs/benchmarks.md) is bench/page.py's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

WRITE_RATIO = 0.9
QUOTA_FRACTION = 0.95
THROTTLED_FRACTION = 0.05
P50_MS = 1000.0
PACED_RATIO = 0.95
PACED_QUOTA_FRACTION = 0.97
CPU_RATIO = 1.2
#: a judged CPU shape reading above this share of the read quota is flagged: it is no longer only CPU-bound
CPU_BUSY_QUOTA_FRACTION = 0.8
IDLE_TRIGGER_MS = 300.0
IDLE_CPU_FRACTION = 0.10
CLUSTER_SERVED_RATIO = 1.05
#: writers on several executors (#52): of what the shards take, and record attempts throttled from the first send
SINK_CLUSTER_OF_QUOTA = 0.95
SINK_CLUSTER_THROTTLED = 0.05
BATCH_SERVED_RATIO = 1.05
BATCH_QUOTA_FRACTION = 0.9
EFO_P50_MS = 150.0
EFO_QUOTA_FRACTION = 0.95
REALTIME_P99_MS = {"polling": 300.0, "efo": 150.0}
AGGREGATION_SPEEDUP = 8.0
#: 10,000 shards on one driver (#42): the judged shape, and its targets
SHARD_SCALE_SHARDS = 10000
SHARD_SCALE_IDLE_CPU_FRACTION = 0.25
SHARD_SCALE_HEAP_MIB = 1024.0
#: "linear or better": a cost's growth exponent from the smallest to the largest shape, with room for noise
SHARD_SCALE_EXPONENT = 1.15

LATENCY_RATE_NOTE = "50 rows/s (rate source → sink → source, 100 ms triggers)"

Add = Callable[[str, str, Any, bool | None], None]


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per target and shape; a section that did not run shows as NOT RUN, never as a PASS."""
    rows: list[dict[str, Any]] = []

    def add(target: str, shape: str, value: Any, ok: bool | None) -> None:
        rows.append(
            {"target": target, "shape": shape, "value": value, "verdict": "NOT RUN" if ok is None else _verdict(ok)}
        )

    for judge in (
        _write_targets,
        _quota_targets,
        _paced_targets,
        _cpu_targets,
        _sink_targets,
        _latency_targets,
        _lull_targets,
        _many_shards_targets,
        _shard_scale_targets,
        _memory_targets,
        _batch_read_targets,
        _cluster_targets,
        _sink_cluster_targets,
        _fanout_targets,
        _realtime_targets,
        _aggregation_targets,
    ):
        judge(results, add)
    return rows


def _not_run(data: dict[str, Any]) -> str:
    return str(data.get("error") or data.get("skipped") or data.get("note") or "not run")


def _write_targets(results: dict[str, Any], add: Add) -> None:
    # The quotas-off read ratio is no target any more: it compared a quota-paced connector with an unpaced loop;
    # _paced_targets compares it with a loop paced to the same quota.
    name = "write ≥ 0.9× raw SDK"
    data = results.get("write") or {}
    if not data.get("shapes"):
        add(name, "-", _not_run(data), None)
    for s in data.get("shapes", []):
        value = s.get("ratioToRawSdk")
        add(name, f"{s['recordBytes']} B × {s['shards']} shard(s)", value, value is not None and value >= WRITE_RATIO)


def _quota_targets(results: dict[str, Any], add: Add) -> None:
    name = "read ≥ 0.95 of quota, ≤ 5% throttled"
    quota = results.get("readUnderQuota") or {}
    if not quota.get("runs"):
        add(name, "-", _not_run(quota), None)
    for r in quota.get("runs", []):
        if r.get("options", "defaults") != "defaults":
            continue
        ok = r["fractionOfByteQuota"] >= QUOTA_FRACTION and (r["throttledFraction"] or 0) <= THROTTLED_FRACTION
        add(
            name,
            f"{r['recordBytes']} B × {r['shards']} shard(s)",
            f"{r['fractionOfByteQuota']} of quota, {r['throttledFraction']} throttled",
            ok,
        )


def _paced_targets(results: dict[str, Any], add: Add) -> None:
    """Connector ≥ 0.95× the paced loop in every shape; ≥ 0.97 of the byte quota wherever the paced loop reaches
    0.97 of it (other shapes are listed as not judged). A shape whose backlog ran out measured the backlog, not a
    reader: not judged either."""
    ratio_name, quota_name = "read under quota ≥ 0.95× paced SDK loop", "read ≥ 0.97 of quota where paced loop is"
    data = results.get("pacedRead") or {}
    if not data.get("shapes"):
        add(ratio_name, "-", _not_run(data), None)
        add(quota_name, "-", _not_run(data), None)
    for s in data.get("shapes", []):
        shape = f"{s['recordBytes']} B × {s['shards']} shard(s)"
        connector, paced, ratio = (
            s["connector"]["fractionOfByteQuota"],
            s["pacedSdk"]["fractionOfByteQuota"],
            s.get("ratioToPacedSdk"),
        )
        if s.get("backlogExhausted"):
            add(ratio_name, shape, f"not judged: the backlog ran out (ratio {ratio})", None)
            add(quota_name, shape, "not judged: the backlog ran out", None)
            continue
        add(
            ratio_name,
            shape,
            f"{ratio} (connector {connector}, paced {paced} of quota)",
            ratio is not None and ratio >= PACED_RATIO,
        )
        if paced >= PACED_QUOTA_FRACTION:
            add(quota_name, shape, f"{connector} of quota (paced loop {paced})", connector >= PACED_QUOTA_FRACTION)
        else:
            add(quota_name, shape, f"not judged: paced loop {paced} of quota (< {PACED_QUOTA_FRACTION})", None)


def _cpu_targets(results: dict[str, Any], add: Add) -> None:
    name = "CPU per record ≤ 1.2× raw SDK (steady state, without JIT)"
    data = results.get("cpuPerRecord") or {}
    if not data.get("shapes"):
        add(name, "-", _not_run(data), None)
    for s in data.get("shapes", []):
        connector = s.get("connectorSteady") or {}
        bracket = connector.get("rawSdkBracket")
        # Results from before the bracketing drains judged against the raw loop's earlier, shorter drain.
        steady = s.get("steadyRatioToBracketWithoutJit") if bracket else s.get("steadyRatioWithoutJit")
        raw = (bracket or s["rawSdk"]).get("withoutJitMicrosPerRecord")
        measured = (
            f"{steady} (steady {connector.get('withoutJitMicrosPerRecord')} vs {raw} µs"
            f"{' (raw loop on the same backlog, before and after)' if bracket else ''} at "
            f"{s.get('fractionOfReadQuota')} of the read quota; against the earlier raw drain "
            f"{s.get('steadyRatioWithoutJit')}; whole drain with JIT {s.get('ratioToRawSdk')}, without "
            f"{s.get('ratioWithoutJit')})"
        )
        if s.get("judged", True):
            if (s.get("fractionOfReadQuota") or 0) > CPU_BUSY_QUOTA_FRACTION:
                measured += (
                    f"; near the read quota the connector keeps, so partly what a second costs (paced loop: "
                    f"{s.get('steadyRatioToPacedWithoutJit')})"
                )
            add(
                name,
                f"{s['recordBytes']} B × {s['shards']} shard(s)",
                measured,
                steady is not None and steady <= CPU_RATIO,
            )
        else:
            add(
                name,
                f"{s['recordBytes']} B × {s['shards']} shard(s)",
                f"not judged (reads at the quota, see the "
                f"paced loop: {s.get('steadyRatioToPacedWithoutJit')}): {measured}",
                None,
            )


def _sink_targets(results: dict[str, Any], add: Add) -> None:
    name = "write (adaptive) ≥ 0.95 of achievable, ≤ 5% throttled"
    sink = results.get("writeUnderQuota") or {}
    adaptive = [r for r in sink.get("summary", []) if r.get("mode") == "adaptive"]
    if not adaptive:
        add(name, "-", _not_run(sink), None)
    for r in adaptive:
        ok = (r["fractionOfAchievable"] or 0) >= QUOTA_FRACTION and (r["throttledFraction"] or 1) <= THROTTLED_FRACTION
        add(
            name,
            f"{r['shards']} shard(s), {r['tasks']} task(s), {r['keys']} keys",
            f"{r['fractionOfAchievable']:.3f} of achievable, {r['throttledFraction']:.4f} throttled",
            ok,
        )


def _latency_targets(results: dict[str, Any], add: Add) -> None:
    latency = results.get("latency") or {}
    if not latency.get("runs"):
        add("p50 latency ≤ 1 s", "-", _not_run(latency), None)
    for r in latency.get("runs", []):
        add("p50 latency ≤ 1 s", f"trigger {r['name']}", f"{r['ms']['p50']} ms", r["ms"]["p50"] <= P50_MS)


#: #42's targets for rare traffic (default options, quotas on): the first record after a minute's silence on a few
#: shards, and a record every 1.5 s on a random shard of a thousand
LULL_P50_MS = 1000.0
SPARSE_P50_MS = 1500.0


def _lull_targets(results: dict[str, Any], add: Add) -> None:
    lull = results.get("lull") or {}
    if "afterLull" not in lull:
        add("p50 after a lull ≤ 1 s", "-", _not_run(lull), None)
        add("p50 sparse traffic ≤ 1.5 s", "-", _not_run(lull), None)
        return
    a, w = lull["afterLull"], lull["sparse"]
    add(
        "p50 after a lull ≤ 1 s",
        f"{a['shards']} shards, {a['silenceSeconds']:.0f} s silences x {a['lulls']}",
        f"{a['ms']['p50']} ms (max {a['ms']['max']} ms)",
        a["ms"]["p50"] <= LULL_P50_MS,
    )
    add(
        "p50 sparse traffic ≤ 1.5 s",
        f"{w['shards']} shards, a record every {w['intervalSeconds']} s",
        f"{w['ms']['p50']} ms (p95 {w['ms']['p95']} ms; idle {w['getRecordsPerSecondIdle']} GetRecords/s)",
        w["ms"]["p50"] <= SPARSE_P50_MS,
    )


def _fanout_targets(results: dict[str, Any], add: Add) -> None:
    names = ("EFO p50 put→row ≤ 150 ms at a 100 ms trigger", "EFO read ≥ 0.95 of 2 MiB/s per shard per consumer")
    data = results.get("fanOut") or {}
    runs = [r for r in data.get("latency", []) if r["mode"] == "efo" and r["name"] == "processingTime=100ms"]
    if not runs:
        add(names[0], "-", _not_run(data), None)
    for r in runs:
        add(names[0], "efo, 2 shards, processingTime=100ms", f"{r['ms']['p50']} ms", r["ms"]["p50"] <= EFO_P50_MS)
    readers = (data.get("throughput") or {}).get("modes", {}).get("efo")
    if not readers:
        add(names[1], "-", _not_run(data), None)
    else:
        fractions = [r["perShardFractionOfQuota"] for r in readers]
        add(
            names[1],
            f"{len(readers)} consumers at once, 2 shards",
            f"{min(fractions)} (each: {fractions})",
            min(fractions) >= EFO_QUOTA_FRACTION,
        )


def _realtime_targets(results: dict[str, Any], add: Add) -> None:
    data = results.get("realTime") or {}
    runs = [r for r in data.get("runs", []) if r["trigger"] == "realTime"]
    if not runs:
        add("real-time mode p99 put→row (polling ≤ 300 ms, EFO ≤ 150 ms)", "-", _not_run(data), None)
    for r in runs:
        limit = REALTIME_P99_MS[r["mode"]]
        add(
            f"real-time mode p99 put→row ≤ {limit:g} ms ({r['mode']})",
            f"{r['mode']}, {data['shards']} shards, {r['recordsPerSecond']} records/s",
            f"{r['ms']['p99']} ms",
            r["ms"]["p99"] <= limit,
        )


def _aggregation_targets(results: dict[str, Any], add: Add) -> None:
    names = (
        f"aggregation=kpl user records/s ≥ {AGGREGATION_SPEEDUP:g}× unaggregated",
        f"aggregation=kpl throttled attempts ≤ {THROTTLED_FRACTION:.0%}",
        "aggregation=kpl p50 put→row ≤ 1 s",
    )
    data = results.get("aggregation") or {}
    if "speedup" not in data:
        for name in names:
            add(name, "-", _not_run(data), None)
        return
    shape = f"{data['recordBytes']} B × {data['shards']} shards, AWS write quotas"
    rates = {t["mode"]: t for t in data["throughput"]}
    add(
        names[0],
        shape,
        f"{data['speedup']}× ({rates['kpl']['userRecordsPerSecond']:,} against "
        f"{rates['none']['userRecordsPerSecond']:,} records/s)",
        data["speedup"] >= AGGREGATION_SPEEDUP,
    )
    throttled = rates["kpl"]["windowThrottledFraction"]
    add(
        names[1],
        shape + ", after warm-up",
        f"{throttled} over {rates['kpl']['windowSeconds']} s (whole write "
        f"{rates['kpl']['throttledFraction']}; unaggregated {rates['none']['windowThrottledFraction']}, whole "
        f"{rates['none']['throttledFraction']})",
        throttled is not None and throttled <= THROTTLED_FRACTION,
    )
    latency = {lt["mode"]: lt for lt in data["latency"]}
    p50 = latency["kpl"]["ms"]["p50"]
    add(
        names[2],
        f"{latency['kpl']['recordsPerSecond']} rows/s, 100 ms triggers both sides",
        f"{p50} ms (unaggregated {latency['none']['ms']['p50']} ms)",
        p50 == p50 and p50 <= P50_MS,
    )


def _many_shards_targets(results: dict[str, Any], add: Add) -> None:
    names = (
        "idle trigger median ≤ 300 ms",
        "idle driver CPU ≤ 10% of a core (without JIT)",
        "p50 put→row ≤ 1 s, all shards busy",
    )
    data = results.get("manyShards") or {}
    if "idle" not in data:
        for name in names:
            add(name, "-", _not_run(data), None)
        return
    # An idle query is judged once idle for a while (its shards polled less often), when that was measured.
    idle = data.get("idleSteady") or data["idle"]
    shape = f"{data['shards']} shards" + (
        f", idle {idle['secondsAfterStart']:.0f} s after the start" if "secondsAfterStart" in idle else ""
    )
    trigger = idle.get("triggerExecutionMs")
    add(
        names[0],
        shape,
        f"{trigger['median']} ms over {trigger['n']} trigger(s)"
        if trigger
        else "no idle trigger reported in the window",
        trigger is not None and trigger["median"] <= IDLE_TRIGGER_MS,
    )
    # As CPU per record: what the JIT compiles minutes in is warm-up (an idle trigger's code runs rarely), not the
    # query's running cost. The whole driver (Spark's own threads included) is shown beside it.
    cpu = idle["cpu"]["fractionOfOneCore"]
    jit = idle["cpu"].get("jitFractionOfOneCore")
    judged = cpu - (jit or 0.0)
    add(
        names[1],
        shape,
        f"{judged:.1%} ("
        + (f"with JIT compiling {jit:.1%}: {cpu:.1%}; " if jit is not None else "")
        + f"just started {data['idle']['cpu']['fractionOfOneCore']:.1%}; Spark alone "
        f"{data['sparkAloneCpu']['fractionOfOneCore']:.1%})",
        judged <= IDLE_CPU_FRACTION,
    )
    # Latency with traffic is judged once the traffic has flowed a while (the JIT compiled what records bring),
    # when that was measured; records missing anywhere in the phase fail it.
    traffic = data["traffic"]
    steady = data.get("trafficSteady")
    p50, missing = (steady or traffic)["ms"]["p50"], traffic["recordsMissing"]
    add(
        names[2],
        f"{data['shards']} shards, {traffic['recordsPerSecond']} records/s"
        + (f", {steady['secondsAfterStart']:.0f} s into the traffic" if steady else ""),
        f"{p50} ms"
        + (f" (first seconds {traffic['ms']['p50']} ms)" if steady else "")
        + (f", {missing} record(s) never arrived" if missing else ""),
        missing == 0 and p50 == p50 and p50 <= P50_MS,
    )  # p50 != p50: NaN, nothing measured


#: what the memory target allows the read to hold beyond `fetchBufferSize`: Spark's own per-query structures, the
#: SDK's clients and connection pools, and records being turned into rows
MEMORY_FIXED_OVERHEAD_MIB = 64


#: the per-shard costs judged "linear or better" (bench/shard_scale.py's figures), with their labels
SHARD_SCALE_COSTS = {
    "startSeconds": "query start",
    "firstAnswersSeconds": "every shard's first answer",
    "idleTriggerMs": "idle trigger",
    "idleCpuFraction": "idle CPU",
    "offsetFileBytes": "offset log entry",
    "walCommitMs": "walCommit",
    "commitOffsetsMs": "commitOffsets",
    "batchTriggerMs": "trigger with traffic",
    "batchLatestOffsetMs": "latestOffset with traffic",
    "batchTriggerCpuMs": "trigger CPU with traffic",
    "idleTriggerCpuMs": "idle trigger CPU",
    "fixedLatestOffsetMs": "latestOffset, 1 s trigger",
    "fixedTriggerCpuMs": "trigger CPU, 1 s trigger",
    "heapAfterFullGcMiB": "heap after a full GC",
}


def _shard_scale_targets(results: dict[str, Any], add: Add) -> None:
    from bench.shard_scale import figures, slopes

    names = (
        "10,000 shards: p50 put→row ≤ 1 s (10 % of shards busy)",
        "10,000 shards: idle CPU ≤ 25% of a core",
        "10,000 shards: heap after a full GC ≤ 1 GiB",
        "per-shard costs linear or better",
    )
    data = results.get("shardScale") or {}
    runs = data.get("runs") or []
    big = [r for r in runs if r["shards"] == SHARD_SCALE_SHARDS]
    if not big:
        for name in names[:3]:
            add(name, "-", _not_run(data) if not runs else f"no {SHARD_SCALE_SHARDS}-shard shape in this run", None)
    for r in big:
        f, shape = figures(r), f"{r['shards']} shards, {r['activeShards']} busy"
        missing = r["traffic"]["recordsMissing"]
        add(
            names[0],
            shape,
            f"{f['p50Ms']} ms (p95 {f['p95Ms']} ms, {missing} missing)",
            f["p50Ms"] == f["p50Ms"] and f["p50Ms"] <= P50_MS and missing == 0,
        )
        idle = r["idle"]
        add(
            names[1],
            f"{r['shards']} shards, {idle['secondsAfterStart']:.0f} s after the start",
            f"{f['idleCpuFraction']:.1%} (JIT {idle['cpu']['jitFractionOfOneCore']:.1%}; after traffic "
            f"{f['idleAfterTrafficCpuFraction']:.1%})",
            f["idleCpuFraction"] <= SHARD_SCALE_IDLE_CPU_FRACTION,
        )
        add(
            names[2],
            f"{r['shards']} shards, end of the traffic",
            f"{f['heapAfterFullGcMiB']} MiB",
            f["heapAfterFullGcMiB"] <= SHARD_SCALE_HEAP_MIB,
        )
    if len(runs) < 2:
        add(names[3], "-", _not_run(data) if not runs else "one shape: no growth to judge", None)
        return
    # Judged on the steepest step between neighbouring shapes: a cost flat up to 5000 shards and doubling
    # again to 10,000 still has a gentle exponent end to end.
    span = f"{runs[0]['shards']} → {runs[-1]['shards']} shards"
    for key, label in SHARD_SCALE_COSTS.items():
        exponent = slopes(runs).get(key) or {}
        steepest = exponent.get("steepest")
        add(
            names[3],
            f"{label}, {span}",
            f"steepest {steepest}, end to end {exponent.get('overall')}"
            if steepest is not None
            else "not measured at two shapes",
            steepest <= SHARD_SCALE_EXPONENT if steepest is not None else None,
        )


def memory_excess_mib(child: dict[str, Any]) -> float | None:
    """Live heap during the drain beyond the live heap before it and beyond `fetchBufferSize` (None: not measured)."""
    if not child.get("liveMaxMiB") or not child.get("fetchBufferSize"):
        return None
    buffer_mib = int(child["fetchBufferSize"]) / 1024 / 1024
    return round(float(child["liveMaxMiB"]) - float(child.get("liveBeforeMiB", 0.0)) - buffer_mib, 1)


def _memory_targets(results: dict[str, Any], add: Add) -> None:
    name = "backlog drained with a 1 GiB driver heap"
    data = results.get("memory") or {}
    if "completed" not in data:
        add(name, "-", _not_run(data), None)
        return
    child = data["child"]
    excess = memory_excess_mib(child)
    value = (
        f"{'completed' if data['completed'] else 'not completed'}, {child.get('records')} of "
        f"{data['recordsInStream']} records, live heap {child.get('liveBeforeMiB')} MiB before, at most "
        f"{child.get('liveMaxMiB')} MiB during, fetchBufferSize {child.get('fetchBufferSize')}: "
        f"{excess} MiB beyond the buffer (allowed {MEMORY_FIXED_OVERHEAD_MIB})"
        + (f" ({child['error']})" if child.get("error") else "")
    )
    add(
        name,
        f"{data['shards']} × {data['mibPerShard']} MiB of {data['recordBytes'] // 1024} KiB records, live heap "
        f"within fetchBufferSize + {MEMORY_FIXED_OVERHEAD_MIB} MiB",
        value,
        data["completed"] and excess is not None and excess <= MEMORY_FIXED_OVERHEAD_MIB,
    )


def _batch_read_targets(results: dict[str, Any], add: Add) -> None:
    served, rate = "batch read: GetRecords bytes ≤ 1.05× stored", "batch read ≥ 0.9 of the shards' read quota"
    data = results.get("batchRead") or {}
    if "runs" not in data:
        add(served, "-", _not_run(data), None)
        add(rate, "-", _not_run(data), None)
        return
    shape = f"{data['shards']} × {data['mibPerShard']} MiB of {data['recordBytes'] // 1024} KiB records"
    once, today = data["runs"]["oneRead"], data["runs"]["today"]
    add(
        served,
        shape,
        f"{once['servedToStored']}× (today's planning: {today['servedToStored']}×)",
        once["servedToStored"] <= BATCH_SERVED_RATIO,
    )
    add(
        rate,
        shape,
        f"{once['fractionOfByteQuota']} over {once['readSeconds']} s of reading, {once['wallSeconds']} s in all "
        f"(today's planning: {today['fractionOfByteQuota']}, {today['wallSeconds']} s"
        + (
            f"; with a buffer holding the whole read: {data['runs']['oneReadWholeBuffer']['fractionOfByteQuota']}"
            if "oneReadWholeBuffer" in data["runs"]
            else ""
        )
        + ")",
        once["fractionOfByteQuota"] >= BATCH_QUOTA_FRACTION,
    )


def _cluster_targets(results: dict[str, Any], add: Add) -> None:
    name = "GetRecords bytes ≤ 1.05× stored (local-cluster)"
    data = results.get("localCluster") or {}
    if "servedToStored" not in data:
        add(name, "-", _not_run(data), None)
        return
    ratio = data["servedToStored"]
    value = f"{ratio}" + ("" if data["completed"] else f", drain not completed ({data['child'].get('error')})")
    add(
        name,
        f"{data['master']}, {data['shards']} shards",
        value,
        data["completed"] and ratio is not None and ratio <= CLUSTER_SERVED_RATIO,
    )


def _sink_cluster_targets(results: dict[str, Any], add: Add) -> None:
    """Per shard count and aggregation: every multi-executor write as it ships (`shares`), its worst figures."""
    name = "several executors: ≥ 0.95 of what the shards take, ≤ 5% throttled"
    data = results.get("sinkCluster") or {}
    rows = [r for r in data.get("rows", []) if r.get("executors", 1) > 1 and r.get("start") == "shares"]
    if not rows:
        add(name, "-", _not_run(data), None)
        return
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["shards"], r["aggregation"]), []).append(r)
    for (shards, aggregation), group in sorted(groups.items()):
        rates = [r["ofQuota"] for r in group if r.get("ofQuota") is not None]
        worst_rate = min(rates) if rates else None
        worst_throttled = max(r["throttledFraction"] for r in group)
        add(
            name,
            f"{shards} shards, aggregation {aggregation}, {len(group)} writes on "
            f"{'/'.join(str(e) for e in sorted({r['executors'] for r in group}))} executors",
            f"lowest {_num(worst_rate, 3)} of what the shards take, highest {worst_throttled:.1%} throttled",
            worst_rate is not None
            and worst_rate >= SINK_CLUSTER_OF_QUOTA
            and worst_throttled <= SINK_CLUSTER_THROTTLED,
        )


def _sink_cluster_section(results: dict[str, Any]) -> list[str]:
    data = results.get("sinkCluster") or {}
    rows = [r for r in data.get("rows", []) if "shards" in r]
    if not rows:
        return []
    out = [
        "",
        "## Writers on several executors (local-cluster[N,1,1024], quotas on; `unpaced`: each executor starts unpaced, "
        "as before #52)",
        "",
        "| executors | shards | aggregation | keys | write | start | of what the shards take | throttled | "
        "attempts | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['executors']} | {r['shards']} | {r['aggregation']} | {r['keys']} | {r['mode']} | {r['start']} | "
            f"{_num(r.get('ofQuota'), 3)} | {r['throttledFraction']:.1%} | {_num(r['attempts'])} | {r['seconds']} |"
        )
    failed = [r for r in data.get("rows", []) if "error" in r]
    out += [f"\n{r['executors']} executors failed: {r['error']}" for r in failed]
    return out


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
    out = [
        f"# spark-kinesis benchmarks — {results['date']}",
        "",
        f"Mode `{results['settings']['mode']}`, {results['settings']['repetitions']} repetition(s) per shape "
        f"(medians), {results.get('elapsedSeconds', 0):.0f} s in all. Machine: {m['cpuCount']} × {m['cpuModel']}, "
        f"{m['memoryGiB']} GiB; Spark {m.get('spark', '?')}, Java {m.get('java', '?')}, connector "
        f"{m['connector']}, AWS SDK for Java {m['awsSdkJava']}, boto3 {m['boto3']}. Load average at start "
        f"{m['load1AtStart']} / {m['load5AtStart']} / {m['load15AtStart']} (1/5/15 min), at the end "
        f"{_num(results.get('loadAtEnd', {}).get('load1'), 2)}: with other work on the machine the figures are "
        "noisy; compare ratios measured inside one run, not absolute rates across runs.",
        "",
        "## Targets",
        "",
        "| target | shape | measured | verdict |",
        "|---|---|---|---|",
    ]
    for row in results["targets"]:
        out.append(f"| {row['target']} | {row['shape']} | {_num(row['value'], 3)} | **{row['verdict']}** |")
    errors = {k: v["error"] for k, v in results.items() if isinstance(v, dict) and "error" in v}
    if errors:
        out += ["", "Sections that failed:", ""] + [f"- `{k}`: {v}" for k, v in errors.items()]

    for section, title, contender in (
        ("read", "Read throughput (quotas off)", "connector"),
        ("write", "Write throughput (quotas off)", "sink"),
    ):
        data = results.get(section) or {}
        if not data.get("shapes"):
            continue
        inside = section == "read"
        out += [
            "",
            f"## {title}",
            "",
            f"| record | shards | {contender} rec/s | MiB/s | "
            + ("inside batches rec/s | " if inside else "")
            + "raw SDK rec/s | MiB/s | boto3 rec/s | MiB/s | "
            "ratio to raw SDK |",
            "|---|---|---|---|" + ("---|" if inside else "") + "---|---|---|---|---|",
        ]
        for s in data["shapes"]:
            c, r, b = s["connector"], s["rawSdk"], s["boto3"]
            extra = f"{_num(s.get('connectorInBatchesRecordsPerSecond'))} | " if inside else ""
            out.append(
                f"| {s['recordBytes']} B | {s['shards']} | {_num(c['recordsPerSecond'])} | "
                f"{_num(c['mibPerSecond'], 2)} | {extra}{_num(r['recordsPerSecond'])} | "
                f"{_num(r['mibPerSecond'], 2)} | {_num(b['recordsPerSecond'])} | {_num(b['mibPerSecond'], 2)} | "
                f"{_num(s['ratioToRawSdk'], 3)} |"
            )
        if not inside and data.get("warmupWrites"):
            timed = f"{data['repetitions']} timed" if data.get("repetitions") else "the timed"
            out += [
                "",
                f"Each contender wrote {data['warmupWrites']} time(s) untimed per record size first; in {timed} "
                "repetitions (medians) the sink and the raw loop take turns going first.",
            ]
    write_shapes = [s for s in (results.get("write") or {}).get("shapes", []) if s.get("sinkCpuMicrosPerRecord")]
    if write_shapes:
        out += [
            "",
            "Write CPU per record (driver JVM process CPU time without the JIT compilers ÷ records written, "
            "each contender started on a quiet JVM; the sink's includes Spark producing the rows and running the "
            "job, the raw loop is handed prepared requests):",
            "",
            "| record | shards | sink µs/record | raw SDK µs/record | ratio |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {s['recordBytes']} B | {s['shards']} | {_num(s['sinkCpuMicrosPerRecord'], 2)} | "
            f"{_num(s['rawSdkCpuMicrosPerRecord'], 2)} | {_num(s['cpuRatioToRawSdk'], 3)} |"
            for s in write_shapes
        ]
    read = results.get("read") or {}
    if read.get("memory"):
        mem = read["memory"]
        out += [
            "",
            "## Memory (read benchmark)",
            "",
            f"Method: {mem['method']}. Max heap {mem['maxHeapMiB']} MiB.",
            "",
            "| record | shards | heap peak MiB (driver = executor) |",
            "|---|---|---|",
        ]
        out += [f"| {p['recordBytes']} B | {p['shards']} | {_num(p['heapPeakMiB'], 1)} |" for p in mem["peaks"]]

    quota = results.get("readUnderQuota") or {}
    if quota.get("runs"):
        out += ["", "## Read under quota (2 MiB/s and 5 GetRecords/s per shard)", ""]
        if quota.get("note"):
            out += [quota["note"], ""]
        out += [
            "| source options | record | shards | MiB/s | of byte quota | GetRecords/s per shard | throttled calls |",
            "|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {r.get('options', 'defaults')} | {r['recordBytes']} B | {r['shards']} | {r['mibPerSecond']} | "
            f"{r['fractionOfByteQuota']} | {r['getRecordsPerShardPerSecond']} | {r['throttledFraction']} |"
            for r in quota["runs"]
        ]

    sink = results.get("writeUnderQuota") or {}
    out += ["", "## Write under quota (SinkQuotaBench)", ""]
    if sink.get("summary"):
        out += [
            "| mode | shards | tasks | keys | quota rec/s | achievable | delivered | of achievable | throttled | "
            "lost | duplicates |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {r['mode']} | {r['shards']} | {r['tasks']} | {r['keys']} | {_num(r['quotaRecordsPerSecond'])} | "
            f"{_num(r['achievableRecordsPerSecond'])} | {_num(r['deliveredRecordsPerSecond'])} | "
            f"{_num(r['fractionOfAchievable'], 3)} | {_num(r['throttledFraction'], 3)} | {r['lost']} | "
            f"{r['duplicates']} |"
            for r in sink["summary"]
        ]
    else:
        out.append(sink.get("note") or sink.get("error") or "not run")

    latency = results.get("latency") or {}
    if latency.get("runs"):
        out += [
            "",
            f"## End-to-end latency ({latency['shards']} shards, {latency['recordsPerSecond']} records/s, "
            f"{latency['seconds']:g} s per trigger)",
            "",
            "| trigger | records | p50 ms | p95 ms | p99 ms | max ms |",
            "|---|---|---|---|---|---|",
        ]
        out += [
            f"| {r['name']} | {r['measured']} | {r['ms']['p50']} | {r['ms']['p95']} | {r['ms']['p99']} | "
            f"{r['ms']['max']} |"
            for r in latency["runs"]
        ]

    fan = results.get("fanOut") or {}
    if fan.get("latency"):
        out += [
            "",
            "## Enhanced fan-out against polling (quotas on)",
            "",
            "| mode | trigger | records | p50 ms | p95 ms | p99 ms | max ms |",
            "|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {r['mode']} | {r['name']} | {r['measured']} | {r['ms']['p50']} | {r['ms']['p95']} | "
            f"{r['ms']['p99']} | {r['ms']['max']} |"
            for r in fan["latency"]
        ]
        t = fan.get("throughput") or {}
        if t.get("modes"):
            out += [
                "",
                f"{t['readers']} queries at once on {t['shards']} shards ({t['bytesPerShard'] // 1048576} MiB "
                f"of {t['recordBytes']} B records per shard), each one's read rate per shard as a fraction of "
                "2 MiB/s:",
                "",
                "| mode | per reader |",
                "|---|---|",
            ]
            out += [
                f"| {m} | {', '.join(str(r['perShardFractionOfQuota']) for r in rs)} |" for m, rs in t["modes"].items()
            ]
    elif fan.get("error"):
        out += ["", "## Enhanced fan-out against polling", "", fan["error"]]

    rt = results.get("realTime") or {}
    if rt.get("runs"):
        out += [
            "",
            f"## Real-time mode against micro-batches at 100 ms ({rt['shards']} shards, quotas on, put→row in "
            "the task)",
            "",
            "| mode | trigger | records/s | records | p50 ms | p95 ms | p99 ms | max ms |",
            "|---|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {r['mode']} | {r['trigger']} | {r['recordsPerSecond']} | {r['measured']} | {r['ms']['p50']} | "
            f"{r['ms']['p95']} | {r['ms']['p99']} | {r['ms']['max']} |"
            for r in rt["runs"]
        ]
    elif rt.get("error"):
        out += ["", "## Real-time mode against micro-batches", "", rt["error"]]

    agg = results.get("aggregation") or {}
    if agg.get("throughput"):
        out += [
            "",
            f"## Sink aggregation ({agg['recordBytes']} B × {agg['shards']} shards, AWS write quotas)",
            "",
            "| aggregation | user records | seconds | user records/s | per Kinesis record | throttled (whole) | "
            "throttled (after warm-up) |",
            "|---|---|---|---|---|---|---|",
        ]
        out += [
            f"| {t['mode']} | {t['userRecords']:,} | {t['seconds']} | {t['userRecordsPerSecond']:,} | "
            f"{t['userRecordsPerKinesisRecord']} | {t['throttledFraction']} | {t['windowThrottledFraction']} over "
            f"{t['windowSeconds']} s |"
            for t in agg["throughput"]
        ]
        out += [
            "",
            f"Put→row at {LATENCY_RATE_NOTE}:",
            "",
            "| aggregation | rows | p50 ms | p95 ms | max ms |",
            "|---|---|---|---|---|",
        ]
        out += [
            f"| {lt['mode']} | {lt['measured']} | {lt['ms']['p50']} | {lt['ms']['p95']} | {lt['ms']['max']} |"
            for lt in agg["latency"]
        ]
    elif agg.get("error"):
        out += ["", "## Sink aggregation", "", agg["error"]]

    scale = results.get("scale") or {}
    if scale.get("runs"):
        out += [
            "",
            f"## Scale (idle, then {scale['trafficRecordsPerSecond']} records/s; quotas on)",
            "",
            "| shards | phase | start s | triggers | batches | latestOffset ms median / max | "
            "queryPlanning ms median / max | triggerExecution ms median / max | ListShards / min |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in scale["runs"]:
            for phase in ("idle", "traffic"):
                p = r[phase]

                def dur(k: str, p: dict[str, Any] = p) -> str:
                    s = p["durationMs"].get(k)
                    return f"{_num(s['median'])} / {_num(s['max'])}" if s else "-"

                out.append(
                    f"| {r['shards']} | {phase} | {r['startSeconds']} | {p['triggers']} | {p['batches']} | "
                    f"{dur('latestOffset')} | {dur('queryPlanning')} | {dur('triggerExecution')} | "
                    f"{p['listShardsPerMinute']} |"
                )
    for render in (
        _paced_section,
        _cpu_section,
        _many_shards_section,
        _shard_scale_section,
        _memory_section,
        _batch_read_section,
        _cluster_section,
        _sink_cluster_section,
    ):
        out += render(results)
    if plots:
        out += ["", "## Plots", ""] + [f"![{name}]({image_prefix}{path})" for name, path in plots.items()]
    return "\n".join(out) + "\n"


def _paced_section(results: dict[str, Any]) -> list[str]:
    data = results.get("pacedRead") or {}
    if not data.get("shapes"):
        return []
    out = [
        "",
        f"## Read under quota: connector vs a paced SDK loop ({data['seconds']:g} s windows)",
        "",
        "Both readers on the same backlog in turn, quotas on; fractions of the byte quota (2 MiB/s per shard) "
        "from the simulator's served bytes (plain window; call-aligned in brackets).",
        "",
        "| record | shards | connector | paced SDK loop | ratio | GetRecords/s per shard (connector / paced) | "
        "throttled (connector / paced) | backlog |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in data["shapes"]:
        c, p = s["connector"]["median"], s["pacedSdk"]["median"]
        backlog = (
            f"{s['backlogRecords']:,}"
            + (" (capped)" if s.get("backlogCapped") else "")
            + (", ran out" if s.get("backlogExhausted") else "")
        )
        out.append(
            f"| {s['recordBytes']} B | {s['shards']} | {s['connector']['fractionOfByteQuota']} "
            f"({c['callAlignedFractionOfByteQuota']}) | {s['pacedSdk']['fractionOfByteQuota']} "
            f"({p['callAlignedFractionOfByteQuota']}) | {_num(s['ratioToPacedSdk'], 3)} | "
            f"{c['getRecordsPerShardPerSecond']} / {p['getRecordsPerShardPerSecond']} | "
            f"{c['throttledFraction']} / {p['throttledFraction']} | {backlog} |"
        )
    return out


def _bracket_cell(steady: dict[str, Any], shape: dict[str, Any]) -> str:
    bracket = steady.get("rawSdkBracket")
    if not bracket:
        return "-"
    before, after = (r.get("withoutJitMicrosPerRecord") for r in bracket["runs"])
    return f"{_num(before, 2)} / {_num(after, 2)} ({_num(shape.get('steadyRatioToBracketWithoutJit'), 3)})"


def _cpu_section(results: dict[str, Any]) -> list[str]:
    data = results.get("cpuPerRecord") or {}
    if not data.get("shapes"):
        return []
    out = [
        "",
        "## CPU per record (quotas off)",
        "",
        "Driver JVM process CPU time / records read (the simulator runs in its own process). With nothing "
        f"running the JVM used {_num(data['backgroundCpuPerSecond'] * 100, 1)} % of a core; the adjusted "
        "figures subtract that over each read's wall time. A fresh JVM's JIT compilers (C1, C2) spend seconds on "
        "Spark's code and each new query's generated classes; the 'without JIT' figures leave their CPU out. "
        "Drain: a whole AvailableNow query (start and stop included). Steady: a running query between the end of "
        "its first batches and its last batch (the target's figure, without JIT). Paced: the raw SDK loop paced "
        "to the read quota like the connector, over a window of the same backlog: like for like, since the "
        "connector reads at the quota even with quotas off, so what a second costs is spread over the records "
        "a second brings. The target is judged on the busy shape only: enough shards that the quota the connector "
        "keeps is above what the machine reads, so the figure is what a record costs, not what a second of "
        "Spark's micro-batches costs divided by the records the quota lets in. Payload copies the raw loop does not "
        "make: a payload under 512 B into the record block and out again for the row; every payload into Spark's "
        "UnsafeRow, which a row-based scan cannot avoid (bench/cpu.py says why).",
        "",
        "| record | shards | records | drain µs/record | raw SDK µs/record | ratio | "
        "adjusted: drain / raw | without JIT: drain / raw (ratio) | steady µs/record (without JIT) | "
        "steady records/s (of read quota) | steady ÷ raw, without JIT | raw SDK on the same backlog, before / "
        "after, without JIT (steady ÷ their mean) | paced SDK µs/record without JIT | "
        "steady ÷ paced, without JIT | judged |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in data["shapes"]:
        c, r = s["connector"], s["rawSdk"]
        steady = s.get("connectorSteady") or {}
        out.append(
            f"| {s['recordBytes']} B | {s['shards']} | {s['recordsInStream']:,} | "
            f"{_num(c['cpuMicrosPerRecord'], 2)} | {_num(r['cpuMicrosPerRecord'], 2)} | "
            f"{_num(s['ratioToRawSdk'], 3)} | {_num(c['backgroundAdjustedMicrosPerRecord'], 2)} / "
            f"{_num(r['backgroundAdjustedMicrosPerRecord'], 2)} | "
            f"{_num(c.get('withoutJitMicrosPerRecord'), 2)} / {_num(r.get('withoutJitMicrosPerRecord'), 2)} "
            f"({_num(s.get('ratioWithoutJit'), 3)}) | {_num(steady.get('cpuMicrosPerRecord'), 2)} "
            f"({_num(steady.get('withoutJitMicrosPerRecord'), 2)}) | {_num(s.get('steadyRecordsPerSecond'), 0)} "
            f"({_num(s.get('fractionOfReadQuota'), 3)}) | {_num(s.get('steadyRatioWithoutJit'), 3)} | "
            f"{_bracket_cell(steady, s)} | "
            f"{_num((steady.get('pacedSdk') or {}).get('withoutJitMicrosPerRecord'), 2)} | "
            f"{_num(s.get('steadyRatioToPacedWithoutJit'), 3)} | {'yes' if s.get('judged', True) else 'no'} |"
        )
    return out


def _many_shards_section(results: dict[str, Any]) -> list[str]:
    data = results.get("manyShards") or {}
    if "idle" not in data:
        return []
    idle, traffic = data["idle"], data["traffic"]
    trigger, busy = idle.get("triggerExecutionMs"), traffic.get("triggerExecutionMs")

    def spread(d: dict[str, Any] | None) -> str:
        return f"{_num(d['median'])} / {_num(d['p95'])} / {_num(d['max'])} (n={d['n']})" if d else "-"

    return [
        "",
        f"## Many shards ({data['shards']} shards, quotas on)",
        "",
        "| figure | value |",
        "|---|---|",
        f"| query start | {data['startSeconds']} s |",
        f"| idle triggerExecution ms median / p95 / max | {spread(trigger)} |",
        f"| idle latestOffset ms median / p95 / max | {spread(idle.get('latestOffsetMs'))} |",
        f"| idle driver CPU ({idle['cpu']['wallSeconds']} s window) | {_cpu(idle['cpu'])} |",
        f"| driver CPU before the query (Spark alone) | {data['sparkAloneCpu']['fractionOfOneCore']:.1%} of a core |",
        f"| idle GetRecords / ListShards / GetShardIterator per minute | {idle['getRecordsPerMinute']} / "
        f"{idle['listShardsPerMinute']} / {idle['getShardIteratorPerMinute']} |",
        *_steady_rows(data.get("idleSteady"), spread),
        f"| traffic | {traffic['recordsPerSecond']} records/s (1 per shard per second), {traffic['recordsSent']} "
        f"sent, {traffic['recordsMissing']} missing |",
        f"| put→row ms p50 / p95 / p99 / max | {traffic['ms']['p50']} / {traffic['ms']['p95']} / "
        f"{traffic['ms']['p99']} / {traffic['ms']['max']} |",
        f"| triggerExecution ms with traffic, median / p95 / max | {spread(busy)} |",
        *(
            [f"| GetRecords per minute with traffic | {traffic['getRecordsPerMinute']} |"]
            if "getRecordsPerMinute" in traffic
            else []
        ),
        *_jit_row("JIT compiler threads' CPU with traffic", traffic),
        *_steady_traffic_rows(data.get("trafficSteady"), spread),
    ]


def _cpu(window: dict[str, Any]) -> str:
    """A window's CPU as a fraction of one core, with the JIT compiler threads' share when measured."""
    jit = window.get("jitFractionOfOneCore")
    return f"{window['fractionOfOneCore']:.1%} of a core" + (f" (JIT compiling: {jit:.1%})" if jit is not None else "")


def _jit_row(label: str, window: dict[str, Any]) -> list[str]:
    jit = window.get("jitFractionOfOneCore")
    return [f"| {label} | {jit:.2f} of a core |"] if jit is not None else []


def _steady_traffic_rows(steady: dict[str, Any] | None, spread: Callable[[dict[str, Any] | None], str]) -> list[str]:
    """The second traffic window's rows: the same traffic, measured again once it has flowed a while."""
    if not steady:
        return []
    after = f"from {steady['secondsAfterStart']:.0f} s into the traffic"
    ms = steady["ms"]
    return [
        f"| put→row ms p50 / p95 / p99 / max {after} | {ms['p50']} / {ms['p95']} / {ms['p99']} / {ms['max']} |",
        f"| triggerExecution ms with traffic {after} | {spread(steady.get('triggerExecutionMs'))} |",
        f"| GetRecords per minute with traffic {after} | {steady['getRecordsPerMinute']} |",
        *_jit_row(f"JIT compiler threads' CPU {after}", steady),
    ]


def _steady_rows(steady: dict[str, Any] | None, spread: Callable[[dict[str, Any] | None], str]) -> list[str]:
    """The second idle window's rows: the same query, idle since it started, measured again later."""
    if not steady:
        return []
    after = f"from {steady['secondsAfterStart']:.0f} s after the start"
    return [
        f"| idle triggerExecution ms {after} | {spread(steady.get('triggerExecutionMs'))} |",
        f"| idle driver CPU {after} ({steady['cpu']['wallSeconds']} s window) | {_cpu(steady['cpu'])} |",
        f"| idle GetRecords per minute {after} | {steady['getRecordsPerMinute']} |",
    ]


def _start(f: dict[str, Any]) -> str:
    """A shape's start and, where measured, when every shard had answered (the cost the start's bound caps)."""
    answered = f.get("firstAnswersSeconds")
    return f"{f['startSeconds']}" if answered is None else f"{f['startSeconds']} / {answered}"


def _shard_scale_section(results: dict[str, Any]) -> list[str]:
    from bench.shard_scale import figures, slopes

    data = results.get("shardScale") or {}
    runs = data.get("runs") or []
    if not runs:
        return ["", "## Up to 10,000 shards", "", data["error"]] if data.get("error") else []
    out = [
        "",
        f"## Up to 10,000 shards (one driver, local[2], default options, quotas on; a record a second on every "
        f"{data['activeEvery']}th shard"
        + (
            f"; every GetRecords answered {data['getRecordsLatencyMs']} ms later"
            if data.get("getRecordsLatencyMs")
            else ""
        )
        + ")",
        "",
        "| shards | start s / every shard answered s (medians of 3) | idle trigger ms | idle CPU | idle GetRecords/s | p50 / p95 ms | batch trigger ms | "
        "latestOffset ms | trigger CPU ms, idle / traffic | offset entry | walCommit ms | commitOffsets ms | "
        "heap after GC | idle after traffic: trigger ms, CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        f = figures(r)
        size = f["offsetFileBytes"]
        out.append(
            f"| {r['shards']} | {_start(f)} | {_num(f['idleTriggerMs'])} | {f['idleCpuFraction']:.1%} | "
            f"{r['idle']['getRecordsPerSecond']} | {f['p50Ms']} / {f['p95Ms']} | {_num(f['batchTriggerMs'])} | "
            f"{_num(f['batchLatestOffsetMs'])} | {_num(f['idleTriggerCpuMs'], 1)} / {_num(f['batchTriggerCpuMs'], 1)} | "
            f"{size / 1024:.0f} KiB | {_num(f['walCommitMs'])} | {_num(f['commitOffsetsMs'])} | "
            f"{f['heapAfterFullGcMiB']} MiB | {_num(f['idleAfterTrafficTriggerMs'])}, "
            f"{f['idleAfterTrafficCpuFraction']:.1%} |"
            if size is not None
            else f"| {r['shards']} | {_start(f)} | - | - | - | - | - | - | - | no offset entry | - | - | - | - |"
        )
    fixed = [(r, r["fixedTrigger"]) for r in runs if r.get("fixedTrigger")]
    if fixed:
        out += [
            "",
            f"The same traffic on a second query triggered every {fixed[0][1]['interval']} (each trigger a second of "
            "records, whatever the machine gives):",
            "",
            "| shards | batches | rows per batch | trigger ms | latestOffset ms | trigger CPU ms: stream / tasks / all | "
            "p50 / p95 ms | missing | GetRecords/s |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r, x in fixed:
            f, cpu = figures(r), x.get("triggerCpuMs") or {}
            out.append(
                f"| {r['shards']} | {x['batches']} | {_num(x['rowsPerBatch'])} | {_num(f['fixedTriggerMs'])} | "
                f"{_num(f['fixedLatestOffsetMs'])} | {_num(cpu.get('stream'), 1)} / {_num(cpu.get('tasks'), 1)} / "
                f"{_num(cpu.get('all'), 1)} | {x['ms']['p50']} / {x['ms']['p95']} | {x['recordsMissing']} | "
                f"{_num(x.get('getRecordsPerSecond'))} |"
            )
    queued = [(r, r["traffic"]["callQueue"]) for r in runs if r.get("traffic", {}).get("callQueue")]
    if queued:
        out += [
            "",
            "The executor's GetRecords calls during the traffic: calls a second (reads, and the idle budget's polls: after "
            "three empty answers at the tip), the mean wait of each for one of its call slots, and a call's mean time:",
            "",
            "| shards | GetRecords/s | reads/s | idle polls/s | read's wait ms | idle poll's wait ms | call ms |",
            "|---|---|---|---|---|---|---|",
        ]
        for r, q in queued:
            out.append(
                f"| {r['shards']} | {_num(r['traffic'].get('getRecordsPerSecond'))} | {q['readCallsPerSecond']} | "
                f"{q['idleCallsPerSecond']} | {_num(q['readWaitMs'], 1)} | {_num(q['idleWaitMs'], 1)} | {_num(q['callMs'], 1)} |"
            )
    growth = slopes(runs)
    out += [
        "",
        "Trigger CPU: CPU ms per trigger of the query's stream thread and the task threads (snapshot tasks, the "
        "batch's reads), from /proc: what a trigger costs whatever else wants the cores, which its wall time "
        "does not say (the idle figure counts every trigger, the traffic figure every trigger in the window).",
        "",
        "Growth exponent (1: linear), steepest between neighbouring shapes / from the smallest to the largest: "
        + ", ".join(
            f"{label} {growth[key]['steepest']} / {growth[key]['overall']}" for key, label in SHARD_SCALE_COSTS.items()
        )
        + ".",
    ]
    return out


def _memory_section(results: dict[str, Any]) -> list[str]:
    data = results.get("memory") or {}
    if "completed" not in data:
        return []
    c = data["child"]
    out = [
        "",
        f"## Memory: a backlog drained with a {data['driverMemory']} driver heap ({data['master']})",
        "",
        "Heap peak: sum of the heap pools' peaks (counts garbage not yet collected); after GC: the most the "
        "heap kept after a collection, sampled every 0.5 s (G1's young collections leave old garbage: an upper "
        "bound); live: heap in use right after a forced full collection, before the query and every 3 s during it.",
        "",
        "| shards × MiB | record | completed | records read | seconds | max heap MiB | heap peak MiB | "
        "after GC MiB | live before MiB | live max MiB | fetchBufferSize | max totalPrefetchedBytes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {data['shards']} × {data['mibPerShard']} | {data['recordBytes'] // 1024} KiB | "
        f"{'yes' if data['completed'] else 'no'} | {_num(c.get('records'))} of {data['recordsInStream']:,} | "
        f"{_num(c.get('seconds'), 1)} | {_num(c.get('maxHeapMiB'), 1)} | {_num(c.get('heapPeakMiB'), 1)} | "
        f"{_num(c.get('liveAfterGcMaxMiB'), 1)} | {_num(c.get('liveBeforeMiB'), 1)} | {_num(c.get('liveMaxMiB'), 1)} | "
        f"{_num(c.get('fetchBufferSize') or 'not reported')} | "
        f"{_num(c.get('maxTotalPrefetchedBytes'))} |",
    ]
    if c.get("error"):
        out += ["", f"The drain failed: {c['error']}"]
    return out


def _batch_read_section(results: dict[str, Any]) -> list[str]:
    data = results.get("batchRead") or {}
    if "runs" not in data:
        return []
    out = [
        "",
        f"## Batch read: {data['shards']} × {data['mibPerShard']} MiB of {data['recordBytes'] // 1024} KiB records "
        f"({data['master']}, fetchBufferSize {data['fetchBufferSize']}, read quotas on)",
        "",
        "Read quota fraction: bytes served over the span from the read's first GetRecords byte to its last, against "
        "the shards' 2 MiB/s each; wall: the whole read (planning and Spark's job included). Today's planning: "
        "every shard read to its tip on the executors, then what did not fit in the buffer read again.",
        "",
        "| planning | served MiB | served / stored | fraction of read quota | seconds reading | seconds to first "
        "byte | seconds in all | GetRecords calls | throttled |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    labels = (
        ("oneRead", "one read (probed ends)"),
        ("today", "today (snapshots)"),
        ("oneReadWholeBuffer", "one read, `fetchBufferSize` holding the whole read"),
    )
    for name, label in labels:
        if name not in data["runs"]:  # runs from before the third row
            continue
        r = data["runs"][name]
        out.append(
            f"| {label} | {r['servedMiB']} | {r['servedToStored']} | {r['fractionOfByteQuota']} | "
            f"{r['readSeconds']} | {r['secondsToFirstByte']} | {r['wallSeconds']} | {r['getRecordsCalls']} | "
            f"{r['throttledGetRecordsCalls']} |"
        )
    return out


def _cluster_section(results: dict[str, Any]) -> list[str]:
    data = results.get("localCluster") or {}
    if "servedToStored" not in data:
        return []
    c = data["child"]
    out = [
        "",
        f"## Re-reads on {data['master']} (Trigger.AvailableNow, quotas off)",
        "",
        "| shards | records | stored MiB | GetRecords served MiB | served / stored | GetRecords calls | "
        "reReadRanges | batches | completed |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {data['shards']} | {data['recordsInStream']:,} | {_num(data['storedBytes'] / 1024 / 1024, 1)} | "
        f"{_num(data['servedBytes'] / 1024 / 1024, 1)} | {_num(data['servedToStored'], 4)} | "
        f"{_num(data['getRecordsCalls'])} | {_num(c.get('reReadRanges'))} | {_num(c.get('batches'))} | "
        f"{'yes' if data['completed'] else 'no'} |",
    ]
    if c.get("error"):
        out += ["", f"The drain failed: {c['error']}"]
    return out


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
                    ax.plot(
                        [s["shards"] for s in rows],
                        [s[key]["recordsPerSecond"] for s in rows],
                        style,
                        label=f"{'sink' if section == 'write' and key == 'connector' else key}, {size} B",
                    )
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
                ax.plot(
                    [e["t"] for e in throttled],
                    [e["batch"] for e in throttled],
                    "x",
                    color="red",
                    ms=4,
                    label="throttled" if task == 0 else None,
                )
                pause.step(
                    times,
                    [e["pauseMs"] for e in trace],
                    where="post",
                    linestyle="--",
                    alpha=0.8,
                    label=f"pause, task {task}",
                )
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
    if len((results.get("shardScale") or {}).get("runs") or []) >= 2:
        files["costs vs shards"] = f"{stem}-shard-scale.png"
        _shard_scale_plot(results["shardScale"], directory / files["costs vs shards"])
    return files


def _shard_scale_plot(data: dict[str, Any], path: Path) -> None:
    """Each of the driver's costs against the shard count, with a linear line through the smallest shape."""
    import matplotlib.pyplot as plt

    from bench.shard_scale import figures

    runs = data["runs"]
    shards = [r["shards"] for r in runs]
    panels = (
        ("idleTriggerMs", "idle trigger, ms (median)"),
        ("idleCpuFraction", "idle CPU, fraction of a core"),
        ("p50Ms", "put→row p50, ms"),
        ("offsetFileBytes", "offset log entry, bytes"),
        ("walCommitMs", "walCommit, ms (median)"),
        ("commitOffsetsMs", "commitOffsets, ms (median)"),
        ("batchTriggerMs", "trigger with traffic, ms (median)"),
        ("batchLatestOffsetMs", "latestOffset with traffic, ms (median)"),
        ("heapAfterFullGcMiB", "heap after a full GC, MiB"),
        ("startSeconds", "query start, s"),
        ("fixedLatestOffsetMs", "latestOffset, 1 s trigger, ms (median)"),
        ("fixedTriggerCpuMs", "trigger CPU, 1 s trigger, ms"),
    )
    fig, axes = plt.subplots(2, 6, figsize=(20, 6))
    for ax, (key, title) in zip(axes.flat, panels):
        values = [figures(r)[key] for r in runs]
        ax.plot(shards, values, "-o")
        if values[0] and key != "p50Ms":  # a cost's linear growth from the smallest shape, for comparison
            ax.plot(shards, [values[0] * s / shards[0] for s in shards], ":", color="grey", label="linear")
            ax.legend(fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("shards")
        ax.set_ylim(bottom=0)
    fig.suptitle("Driver costs against shards (one driver, local[2], quotas on)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
