"""The summary, targets and plots from a hand-made SinkQuotaBench file (the format agreed with its author)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.quota import fold_sink_quota
from bench.report import markdown, plot, targets

SAMPLE = Path(__file__).with_name("sink_quota_sample.json")


def _results() -> dict[str, Any]:
    return {
        "date": "2026-01-01",
        "settings": {"mode": "smoke", "repetitions": 1},
        "machine": {
            "cpuCount": 2,
            "cpuModel": "cpu",
            "memoryGiB": 1,
            "connector": "x",
            "awsSdkJava": "y",
            "boto3": "z",
            "load1AtStart": 1.0,
            "load5AtStart": 1.0,
            "load15AtStart": 1.0,
        },
        "writeUnderQuota": fold_sink_quota(json.loads(SAMPLE.read_text())),
        "latency": {
            "shards": 2,
            "recordsPerSecond": 50,
            "seconds": 3,
            "runs": [
                {
                    "name": "default",
                    "measured": 3,
                    "ms": {"p50": 800.0, "p95": 900.0, "p99": 950.0, "max": 990.0},
                    "samplesMs": [700.0, 800.0, 990.0],
                }
            ],
        },
    }


def test_write_under_quota_verdicts_come_from_the_adaptive_runs() -> None:
    results = _results()
    rows = [t for t in targets(results) if t["target"].startswith("write (adaptive)")]
    assert [r["verdict"] for r in rows] == ["PASS", "MISS"]  # uniform keys pass, the hot key misses
    assert {t["verdict"] for t in targets(results) if t["target"].startswith("read")} == {"NOT RUN"}


def test_summary_has_the_sink_quota_table() -> None:
    results = _results()
    results["targets"] = targets(results)
    text = markdown(results, {})
    assert "| adaptive | 4 | 2 | uniform |" in text and "| ladder | 4 | 2 | hot |" in text
    assert "**MISS**" in text and "**PASS**" in text


def test_plots_include_the_flow_control_trace(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")  # bench/requirements.txt; make test installs it
    files = plot(_results(), tmp_path, "sample")
    assert set(files) == {"latency distribution", "flow-control trace"}
    for name in files.values():
        assert (tmp_path / name).stat().st_size > 1000


def test_read_rate_under_quota_counts_each_call_with_the_wait_it_bought() -> None:
    from bench.quota import call_aligned_rate

    # One shard serving a 10 MiB call every 5 s (2 MiB/s), sampled across 4 calls: the plain window (0..15.5 s)
    # would say 40 MiB / 15.5 s; the call-aligned rate says 2 MiB/s.
    mib = 1024 * 1024
    samples = [(t / 10, {"s0": float(10 * mib * (1 + int(t / 10 // 5)))}) for t in range(0, 156)]
    rate, corrected = call_aligned_rate(samples)
    assert corrected == 1 and abs(rate - 2 * mib) < 0.01 * mib

    # Small calls (1 MiB each 0.5 s): the plain window.
    samples = [(t / 10, {"s0": float(mib * (1 + t // 5))}) for t in range(0, 151)]
    rate, corrected = call_aligned_rate(samples)
    assert corrected == 0 and abs(rate - 2 * mib) < 0.01 * mib


def _paced_shape(shards: int, connector: float, paced: float, exhausted: bool = False) -> dict[str, Any]:
    from bench.paced import summarize

    def run(fraction: float) -> dict[str, Any]:
        return {
            "fractionOfByteQuota": fraction,
            "callAlignedFractionOfByteQuota": fraction,
            "getRecordsPerShardPerSecond": 2.0,
            "throttledFraction": 0.0,
            "backlogExhausted": exhausted,
        }

    return summarize(shards, 100, 1000, False, 1.0, {"connector": [run(connector)], "pacedSdk": [run(paced)]})


def _bracketed_shape(earlier_ratio: float, bracket_ratio: float) -> dict[str, Any]:
    raw = {"cpuMicrosPerRecord": 3.0, "withoutJitMicrosPerRecord": 2.5}
    return {
        "recordBytes": 1024,
        "shards": 64,
        "recordsInStream": 1000,
        "ratioToRawSdk": 1.2,
        "steadyRatioWithoutJit": earlier_ratio,
        "steadyRatioToBracketWithoutJit": bracket_ratio,
        "judged": True,
        "fractionOfReadQuota": 0.7,
        "connector": {"cpuMicrosPerRecord": 2.4, "backgroundAdjustedMicrosPerRecord": 2.3},
        "connectorSteady": {
            "cpuMicrosPerRecord": 4.5,
            "withoutJitMicrosPerRecord": 4.0,
            "rawSdkBracket": {**raw, "runs": [raw, raw]},
        },
        "rawSdk": {
            "cpuMicrosPerRecord": 2.0,
            "backgroundAdjustedMicrosPerRecord": 1.9,
            "withoutJitMicrosPerRecord": 2.0,
        },
    }


def _engine_results() -> dict[str, Any]:
    """The source read engine's sections as they write them (hand-made figures)."""
    results = _results()
    results["pacedRead"] = {
        "seconds": 15.0,
        "shapes": [
            _paced_shape(1, 0.98, 0.99),
            _paced_shape(4, 0.90, 0.99),
            _paced_shape(64, 0.50, 0.60),
            _paced_shape(16, 0.99, 0.99, exhausted=True),
        ],
    }
    results["cpuPerRecord"] = {
        "backgroundCpuPerSecond": 0.02,
        "shapes": [
            # a shape read at the quota is not judged, whatever its ratio
            {
                "recordBytes": 100,
                "shards": 8,
                "recordsInStream": 1000,
                "ratioToRawSdk": 3.0,
                "steadyRatioWithoutJit": 2.5,
                "judged": False,
                "fractionOfReadQuota": 0.98,
                "steadyRatioToPacedWithoutJit": 1.3,
                "connector": {"cpuMicrosPerRecord": 3.0, "backgroundAdjustedMicrosPerRecord": 2.9},
                "connectorSteady": {"cpuMicrosPerRecord": 3.0, "withoutJitMicrosPerRecord": 2.5},
                "rawSdk": {
                    "cpuMicrosPerRecord": 1.0,
                    "backgroundAdjustedMicrosPerRecord": 0.9,
                    "withoutJitMicrosPerRecord": 1.0,
                },
            },
            # the verdict follows the steady-state ratio without JIT, not the whole drain's
            {
                "recordBytes": 100,
                "shards": 64,
                "recordsInStream": 1000,
                "ratioToRawSdk": 3.0,
                "steadyRatioWithoutJit": 1.15,
                "judged": True,
                "fractionOfReadQuota": 0.4,
                "connector": {"cpuMicrosPerRecord": 3.0, "backgroundAdjustedMicrosPerRecord": 2.9},
                "connectorSteady": {"cpuMicrosPerRecord": 2.0, "withoutJitMicrosPerRecord": 1.15},
                "rawSdk": {
                    "cpuMicrosPerRecord": 1.0,
                    "backgroundAdjustedMicrosPerRecord": 0.9,
                    "withoutJitMicrosPerRecord": 1.0,
                },
            },
            {
                "recordBytes": 1024,
                "shards": 64,
                "recordsInStream": 1000,
                "ratioToRawSdk": 1.2,
                "steadyRatioWithoutJit": 2.0,
                "judged": True,
                "fractionOfReadQuota": 0.7,
                "connector": {"cpuMicrosPerRecord": 2.4, "backgroundAdjustedMicrosPerRecord": 2.3},
                "connectorSteady": {"cpuMicrosPerRecord": 4.5, "withoutJitMicrosPerRecord": 4.0},
                "rawSdk": {
                    "cpuMicrosPerRecord": 2.0,
                    "backgroundAdjustedMicrosPerRecord": 1.9,
                    "withoutJitMicrosPerRecord": 2.0,
                },
            },
            # with the raw loop's drains of the same backlog around the query, the verdict follows them
            _bracketed_shape(earlier_ratio=1.1, bracket_ratio=1.8),
            _bracketed_shape(earlier_ratio=2.0, bracket_ratio=1.15),
        ],
    }
    duration = {"median": 120.0, "p95": 200.0, "max": 250.0, "n": 28}
    results["manyShards"] = {
        "shards": 1000,
        "startSeconds": 3.0,
        "sparkAloneCpu": {"fractionOfOneCore": 0.01, "wallSeconds": 10.0},
        "idle": {
            "triggerExecutionMs": duration,
            "latestOffsetMs": duration,
            "getRecordsPerMinute": 60.0,
            "listShardsPerMinute": 60.0,
            "getShardIteratorPerMinute": 0.0,
            "cpu": {"fractionOfOneCore": 0.08, "wallSeconds": 30.0, "cpuSeconds": 2.4},
        },
        "traffic": {
            "recordsPerSecond": 1000,
            "recordsSent": 30000,
            "recordsMissing": 0,
            "triggerExecutionMs": None,
            "ms": {"p50": 400.0, "p95": 700.0, "p99": 900.0, "max": 990.0},
        },
    }
    results["memory"] = {
        "shards": 64,
        "mibPerShard": 20,
        "recordBytes": 10240,
        "driverMemory": "1g",
        "master": "local[2]",
        "recordsInStream": 131072,
        "completed": True,
        "child": {
            "records": 131072,
            "seconds": 80.0,
            "maxHeapMiB": 1024.0,
            "heapPeakMiB": 900.0,
            "liveAfterGcMaxMiB": 300.0,
            "liveBeforeMiB": 60.0,
            "liveMaxMiB": 240.0,
            "fetchBufferSize": 128 * 1024 * 1024,
            "error": None,
        },
    }
    results["localCluster"] = {
        "master": "local-cluster[2,1,1024]",
        "shards": 8,
        "recordsInStream": 160000,
        "storedBytes": 170 * 1024 * 1024,
        "servedBytes": 180 * 1024 * 1024,
        "servedToStored": 1.0588,
        "getRecordsCalls": 100,
        "completed": True,
        "child": {"reReadRanges": 3, "batches": 4, "error": None},
    }
    return results


def _verdicts(rows: list[dict[str, Any]], prefix: str) -> list[str]:
    return [r["verdict"] for r in rows if r["target"].startswith(prefix)]


def test_paced_read_targets_judge_the_ratio_and_the_quota_where_the_paced_loop_reaches_it() -> None:
    rows = targets(_engine_results())
    # 1 shard passes both; 4 shards: ratio 0.91 misses, quota 0.90 misses; 64 shards: ratio 0.83 misses, the
    # quota target is not judged (paced loop 0.60); 16 shards: the backlog ran out, neither is judged.
    assert _verdicts(rows, "read under quota ≥ 0.95×") == ["PASS", "MISS", "MISS", "NOT RUN"]
    assert _verdicts(rows, "read ≥ 0.97 of quota") == ["PASS", "MISS", "NOT RUN", "NOT RUN"]
    assert not [r for r in rows if r["target"].startswith("read ≥ 0.9× raw SDK")]  # the old target is gone


def test_engine_targets_for_cpu_scale_memory_and_cluster() -> None:
    rows = targets(_engine_results())
    assert _verdicts(rows, "CPU per record") == ["NOT RUN", "PASS", "MISS", "MISS", "PASS"]
    cpu_values = [r["value"] for r in rows if r["target"].startswith("CPU per record")]
    assert "not judged" in cpu_values[0]
    assert ["near the read quota" in v for v in cpu_values] == [False, False, False, False, False]
    assert _verdicts(rows, "idle trigger median") == ["PASS"]
    assert _verdicts(rows, "idle driver CPU") == ["PASS"]  # 8 % of a core, within 10 %
    assert _verdicts(rows, "p50 put→row") == ["PASS"]
    assert _verdicts(rows, "backlog drained with a 1 GiB") == ["PASS"]  # 240 - 60 - 128 = 52 MiB beyond the buffer
    assert _verdicts(rows, "GetRecords bytes ≤ 1.05×") == ["MISS"]  # 1.0588


def test_a_judged_cpu_shape_near_the_read_quota_is_flagged_and_still_judged() -> None:
    results = _engine_results()
    results["cpuPerRecord"]["shapes"][-1]["fractionOfReadQuota"] = 0.92
    rows = [r for r in targets(results) if r["target"].startswith("CPU per record")]
    assert [r["verdict"] for r in rows][-1] == "PASS" and "near the read quota" in rows[-1]["value"]


def test_memory_target_misses_when_the_live_heap_outgrows_the_buffer() -> None:
    results = _engine_results()
    results["memory"]["child"]["liveMaxMiB"] = 260.0  # 72 MiB beyond the buffer
    assert _verdicts(targets(results), "backlog drained with a 1 GiB") == ["MISS"]
    results["memory"]["child"]["liveMaxMiB"] = None  # not measured: no verdict of PASS
    assert _verdicts(targets(results), "backlog drained with a 1 GiB") == ["MISS"]


def test_idle_targets_use_the_steady_window_when_there_is_one() -> None:
    results = _engine_results()
    idle = results["manyShards"]["idle"]
    idle["cpu"] = {**idle["cpu"], "fractionOfOneCore": 0.12}
    results["manyShards"]["idleSteady"] = {
        **idle,
        "secondsAfterStart": 120.0,
        "cpu": {"fractionOfOneCore": 0.04, "wallSeconds": 30.0, "cpuSeconds": 1.2},
    }
    rows = targets(results)
    assert _verdicts(rows, "idle driver CPU") == ["PASS"]  # 4 % two minutes in; 12 % just after the start
    assert [r["value"] for r in rows if r["target"].startswith("idle driver CPU")][0].startswith(
        "4.0% (just started 12.0%"
    )
    assert "| idle driver CPU from 120 s after the start (30.0 s window) | 4.0% of a core |" in markdown(
        {**results, "targets": rows}, {}
    )


def test_idle_cpu_is_judged_without_the_jit_and_shows_the_whole_driver() -> None:
    results = _engine_results()
    idle = results["manyShards"]["idle"]
    cpu = {"fractionOfOneCore": 0.057, "jitFractionOfOneCore": 0.012, "wallSeconds": 30.0, "cpuSeconds": 1.71}
    results["manyShards"]["idleSteady"] = {**idle, "secondsAfterStart": 360.0, "cpu": cpu}
    row = [r for r in targets(results) if r["target"].startswith("idle driver CPU")][0]
    assert row["verdict"] == "PASS" and row["value"].startswith("4.5% (with JIT compiling 1.2%: 5.7%;")
    results["manyShards"]["idleSteady"]["cpu"] = {**cpu, "fractionOfOneCore": 0.115}
    assert _verdicts(targets(results), "idle driver CPU") == ["MISS"]  # 10.3 % without the JIT


def test_many_shards_reports_the_call_rate_with_traffic_when_measured() -> None:
    results = _engine_results()
    assert "GetRecords per minute with traffic" not in markdown({**results, "targets": targets(results)}, {})
    results["manyShards"]["traffic"]["getRecordsPerMinute"] = 75000.0
    text = markdown({**results, "targets": targets(results)}, {})
    assert "| GetRecords per minute with traffic | 75000.0 |" in text


def test_latency_with_traffic_is_judged_in_the_steady_window_when_there_is_one() -> None:
    results = _engine_results()
    results["manyShards"]["traffic"]["ms"]["p50"] = 1600.0
    assert _verdicts(targets(results), "p50 put→row") == ["MISS"]
    results["manyShards"]["trafficSteady"] = {
        "secondsAfterStart": 180.0,
        "measured": 30000,
        "triggerExecutionMs": None,
        "getRecordsPerMinute": 64000.0,
        "jitFractionOfOneCore": 0.12,
        "ms": {"p50": 900.0, "p95": 1300.0, "p99": 1500.0, "max": 2000.0},
    }
    rows = targets(results)
    assert _verdicts(rows, "p50 put→row") == ["PASS"]
    assert [r["value"] for r in rows if r["target"].startswith("p50 put→row")] == ["900.0 ms (first seconds 1600.0 ms)"]
    text = markdown({**results, "targets": rows}, {})
    assert "| put→row ms p50 / p95 / p99 / max from 180 s into the traffic | 900.0 / 1300.0 / 1500.0 / 2000.0 |" in text
    assert "| JIT compiler threads' CPU from 180 s into the traffic | 0.12 of a core |" in text
    results["manyShards"]["traffic"]["recordsMissing"] = 3  # lost anywhere in the phase: a miss whatever the p50
    assert _verdicts(targets(results), "p50 put→row") == ["MISS"]


def test_fanout_targets_judge_efo_latency_and_each_consumers_rate() -> None:
    ms = {"p50": 120.0, "p95": 180.0, "p99": 240.0, "max": 300.0}
    results = {
        **_results(),
        "fanOut": {
            "latency": [
                {"mode": m, "name": t, "measured": 10, "ms": ms}
                for m in ("polling", "efo")
                for t in ("default", "processingTime=100ms")
            ],
            "throughput": {
                "shards": 2,
                "recordBytes": 1024,
                "readers": 3,
                "bytesPerShard": 41943040,
                "modes": {
                    "polling": [{"bytesPerSecond": 1, "perShardFractionOfQuota": 0.33}] * 3,
                    "efo": [{"bytesPerSecond": 1, "perShardFractionOfQuota": f} for f in (0.99, 0.97, 0.93)],
                },
            },
        },
    }
    rows = targets(results)
    assert _verdicts(rows, "EFO p50 put→row") == ["PASS"]
    assert _verdicts(rows, "EFO read ≥ 0.95") == ["MISS"]  # the slowest of the three consumers counts
    text = markdown({**results, "targets": rows}, {})
    assert "| efo | processingTime=100ms | 10 | 120.0 | 180.0 | 240.0 | 300.0 |" in text
    assert "| efo | 0.99, 0.97, 0.93 |" in text
    assert set(_verdicts(targets(_results()), "EFO")) == {"NOT RUN"}


def test_engine_targets_are_not_run_without_their_sections() -> None:
    rows = targets(_results())
    for prefix in (
        "read under quota",
        "CPU per record",
        "idle trigger",
        "idle driver CPU",
        "p50 put→row",
        "backlog drained",
        "GetRecords bytes",
    ):
        assert set(_verdicts(rows, prefix)) == {"NOT RUN"}, prefix


def test_summary_has_the_engine_sections() -> None:
    results = _engine_results()
    results["targets"] = targets(results)
    text = markdown(results, {})
    for title in (
        "## Read under quota: connector vs a paced SDK loop",
        "## CPU per record (quotas off)",
        "## Many shards (1000 shards, quotas on)",
        "## Memory: a backlog drained with a 1g driver heap",
        "## Re-reads on local-cluster[2,1,1024]",
    ):
        assert title in text, title
    assert "| 100 B | 1 | 0.98 (0.98) | 0.99 (0.99) | 0.990 |" in text
    assert "| 64 × 20 | 10 KiB | yes | 131,072 of 131,072 |" in text
    assert "| 2.50 / 2.50 (1.800) |" in text  # the raw loop's drains around the query, and the judged ratio


def test_progress_summary_reads_the_new_metric_names() -> None:
    from bench.child import progress_summary

    progress = [
        {
            "numInputRows": 10,
            "sources": [
                {"metrics": {"fetchBufferSize": "268435456", "totalPrefetchedBytes": "1000", "reReadRanges": "1"}}
            ],
        },
        {
            "numInputRows": 0,
            "sources": [
                {"metrics": {"fetchBufferSize": "268435456", "totalPrefetchedBytes": "5000", "reReadRanges": "0"}}
            ],
        },
    ]
    summary = progress_summary(progress)
    assert summary["records"] == 10 and summary["batches"] == 1
    assert summary["fetchBufferSize"] == 268435456 and summary["maxTotalPrefetchedBytes"] == 5000
    assert summary["reReadRanges"] == 1
    assert progress_summary([{"numInputRows": 3, "sources": [{"metrics": {}}]}])["fetchBufferSize"] is None


def _shard_scale_run(shards: int, p50: float, offset_bytes: int, idle_cpu: float, heap: float) -> dict[str, Any]:
    def spread(median: float) -> dict[str, float]:
        return {"median": median, "p95": median, "max": median, "n": 5}

    idle = {
        "secondsAfterStart": 150.0,
        "triggerExecutionMs": spread(250.0),
        "getRecordsPerSecond": 250.0,
        "cpu": {"wallSeconds": 60.0, "fractionOfOneCore": idle_cpu, "jitFractionOfOneCore": 0.01},
    }
    return {
        "shards": shards,
        "activeShards": shards // 10,
        "startSeconds": shards / 1000,
        "idle": idle,
        "idleAfterTraffic": idle,
        "traffic": {
            "ms": {"p50": p50, "p95": 2 * p50},
            "recordsMissing": 0,
            "offsetFileBytes": offset_bytes,
            "walCommitMs": spread(shards / 100),
            "commitOffsetsMs": spread(50.0),
            "triggerExecutionMs": spread(shards / 10),
            "latestOffsetMs": spread(shards / 20),
        },
        "heapAfterFullGcMiB": heap,
    }


def test_shard_scale_judges_the_10000_shard_shape_and_each_cost_s_growth(tmp_path: Path) -> None:
    from bench.shard_scale import slopes

    runs = [
        _shard_scale_run(1000, 400.0, 60_000, 0.05, 100.0),
        _shard_scale_run(10000, 1400.0, 6_000_000, 0.16, 300.0),  # the offset grows 100x for 10x the shards
    ]
    results = _results() | {"shardScale": {"activeEvery": 10, "runs": runs, "slopes": slopes(runs)}}
    rows = targets(results)
    assert _verdicts(rows, "10,000 shards: p50") == ["MISS"]
    assert _verdicts(rows, "10,000 shards: idle CPU") == ["PASS"]
    assert _verdicts(rows, "10,000 shards: heap") == ["PASS"]
    growth = {r["shape"].split(",")[0]: r["verdict"] for r in rows if r["target"].startswith("per-shard costs")}
    assert growth["offset log entry"] == "MISS" and growth["walCommit"] == "PASS" and growth["commitOffsets"] == "PASS"
    summary = markdown(results | {"targets": rows}, {})
    assert "## Up to 10,000 shards" in summary and "| 10000 | 10.0 | 250 | 16.0% |" in summary
    assert "its call slots" not in summary, "runs from before the executor's call queue was measured"
    runs[1]["traffic"] |= {
        "getRecordsPerSecond": 1500.0,
        "callQueue": {
            "readCallsPerSecond": 1000.0,
            "idleCallsPerSecond": 480.0,
            "readWaitMs": 2.25,
            "idleWaitMs": 40.0,
            "callMs": 11.5,
        },
    }
    assert "| 10000 | 1,500 | 1000.0 | 480.0 | 2.2 | 40.0 | 11.5 |" in markdown(results | {"targets": rows}, {})
    assert "answered 50 ms later" not in summary
    results["shardScale"]["getRecordsLatencyMs"] = 50  # a probe with a slower endpoint says so in its heading
    assert "; every GetRecords answered 50 ms later)" in markdown(results | {"targets": rows}, {})
    pytest.importorskip("matplotlib")  # bench/requirements.txt
    files = plot(results, tmp_path, "x")
    assert (tmp_path / files["costs vs shards"]).stat().st_size > 1000


def test_shard_scale_without_its_big_shape_is_not_judged_there() -> None:
    runs = [_shard_scale_run(10, 400.0, 600, 0.05, 100.0)]
    results = _results() | {"shardScale": {"activeEvery": 10, "runs": runs, "slopes": {}}}
    rows = targets(results)
    assert set(_verdicts(rows, "10,000 shards")) == {"NOT RUN"}
    assert _verdicts(rows, "per-shard costs") == ["NOT RUN"]


def test_shard_scale_judges_the_steepest_step_so_a_knee_at_the_big_end_misses() -> None:
    from bench.shard_scale import slopes

    runs = [_shard_scale_run(n, 300.0, 60 * n, 0.05, 100.0) for n in (1000, 5000, 10000)]
    runs[1]["traffic"]["latestOffsetMs"]["median"] = 60.0  # flat from 1000 (50 ms) to 5000 shards, then 6x
    runs[2]["traffic"]["latestOffsetMs"]["median"] = 360.0
    growth = slopes(runs)["batchLatestOffsetMs"]
    assert growth["overall"] is not None and growth["overall"] < 1.15 < growth["steepest"]
    results = _results() | {"shardScale": {"activeEvery": 10, "runs": runs, "slopes": slopes(runs)}}
    verdicts = {r["shape"].split(",")[0]: r["verdict"] for r in targets(results) if r["target"].startswith("per-shard")}
    assert verdicts["latestOffset with traffic"] == "MISS" and verdicts["offset log entry"] == "PASS"


def test_shard_scale_judges_the_fixed_interval_window_and_runs_without_it_are_not_judged_there() -> None:
    from bench.shard_scale import slopes

    def fixed(shards: int, latest_offset_ms: float) -> dict[str, Any]:
        return {
            "interval": "1 second",
            "batches": 40,
            "rowsPerBatch": shards / 10,
            "ms": {"p50": 700.0, "p95": 1100.0},
            "recordsMissing": 0,
            "triggerExecutionMs": {"median": 200.0, "p95": 200.0, "max": 200.0, "n": 40},
            "latestOffsetMs": {"median": latest_offset_ms, "p95": latest_offset_ms, "max": latest_offset_ms, "n": 40},
            "triggerCpuMs": {"stream": shards / 200, "tasks": shards / 200, "all": shards / 100, "triggers": 40},
        }

    runs = [_shard_scale_run(n, 300.0, 60 * n, 0.05, 100.0) for n in (5000, 10000)]
    old = {r["target"] + r["shape"]: r["verdict"] for r in targets(_results() | {"shardScale": {"runs": runs}})}
    runs[0]["fixedTrigger"], runs[1]["fixedTrigger"] = fixed(5000, 20.0), fixed(10000, 60.0)  # latestOffset 3x
    results = _results() | {"shardScale": {"activeEvery": 10, "runs": runs, "slopes": slopes(runs)}}
    verdicts = {r["shape"].split(",")[0]: r["verdict"] for r in targets(results) if r["target"].startswith("per-shard")}
    assert verdicts["latestOffset"] == "MISS" and verdicts["trigger CPU"] == "PASS"
    fixed_rows = [v for k, v in old.items() if "1 s trigger" in k]
    assert len(fixed_rows) == 2 and set(fixed_rows) == {"NOT RUN"}, old
    summary = markdown(results | {"targets": targets(results)}, {})
    assert (
        "triggered every 1 second" in summary and "| 10000 | 40 | 1,000 | 200 | 60 | 50.0 / 50.0 / 100.0 |" in summary
    )


def test_shard_scale_splits_a_shape_into_streams_of_at_most_the_stream_size() -> None:
    from bench.shard_scale import stream_sizes

    assert stream_sizes(10000, 10000) == [10000]
    assert stream_sizes(20000, 10000) == [10000, 10000]
    assert stream_sizes(25000, 10000) == [8334, 8333, 8333]
