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
        "date": "2026-01-01", "settings": {"mode": "smoke", "repetitions": 1},
        "machine": {"cpuCount": 2, "cpuModel": "cpu", "memoryGiB": 1, "connector": "x", "awsSdkJava": "y",
                    "boto3": "z", "load1AtStart": 1.0, "load5AtStart": 1.0, "load15AtStart": 1.0},
        "writeUnderQuota": fold_sink_quota(json.loads(SAMPLE.read_text())),
        "latency": {"shards": 2, "recordsPerSecond": 50, "seconds": 3, "runs": [
            {"name": "default", "measured": 3, "ms": {"p50": 800.0, "p95": 900.0, "p99": 950.0, "max": 990.0},
             "samplesMs": [700.0, 800.0, 990.0]}]},
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
