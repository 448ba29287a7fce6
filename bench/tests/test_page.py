"""The results page (bench/page.py): each headline figure from the newest run that measured it, the hand-kept
extras standing in only until a run measures their figure again, and a page that stays short with links that
resolve."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bench import page
from bench.env import REPO


def _latency(p50: float) -> dict[str, Any]:
    return {
        "shards": 2,
        "recordsPerSecond": 200,
        "seconds": 30,
        "runs": [
            {
                "name": name,
                "measured": 10,
                "ms": {"p50": p50, "p95": p50 * 1.5, "p99": p50 * 2, "max": p50 * 3},
                "samplesMs": [p50],
            }
            for name in ("default", "processingTime=100ms")
        ],
    }


def _many_shards(idle_cpu: float) -> dict[str, Any]:
    duration = {"median": 250.0, "p95": 260.0, "max": 270.0, "n": 28}
    return {
        "shards": 1000,
        "startSeconds": 3.0,
        "sparkAloneCpu": {"fractionOfOneCore": 0.01, "wallSeconds": 10.0},
        "idle": {
            "triggerExecutionMs": duration,
            "latestOffsetMs": duration,
            "getRecordsPerMinute": 60.0,
            "listShardsPerMinute": 60.0,
            "getShardIteratorPerMinute": 0.0,
            "cpu": {"fractionOfOneCore": idle_cpu, "wallSeconds": 30.0, "cpuSeconds": 1.0},
        },
        "traffic": {
            "recordsPerSecond": 1000,
            "recordsSent": 30000,
            "recordsMissing": 0,
            "triggerExecutionMs": None,
            "ms": {"p50": 300.0, "p95": 500.0, "p99": 700.0, "max": 900.0},
        },
    }


def _run(directory: Path, stem: str, started: str, mode: str = "full", **sections: Any) -> dict[str, Any]:
    results = {
        "date": started[:10],
        "startedAt": started,
        "settings": {"mode": mode, "repetitions": 3},
        "machine": {
            "cpuCount": 2,
            "cpuModel": "cpu",
            "memoryGiB": 8,
            "spark": "4.3.0",
            "java": "17",
            "awsSdkJava": "2",
            "boto3": "1",
            "connector": "x",
            "load1AtStart": 1.0,
            "commit": f"c-{stem}",
        },
        **sections,
    }
    (directory / f"{stem}.json").write_text(json.dumps(results))
    (directory / f"{stem}.md").write_text("# summary\n")
    return results


def _row(text: str, label: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith(f"| {label} |")]
    return line


def test_a_figure_comes_from_the_newest_run_that_measured_it(tmp_path: Path) -> None:
    _run(tmp_path, "2026-01-01", "2026-01-01T10:00:00+00:00", latency=_latency(900.0), manyShards=_many_shards(0.12))
    _run(tmp_path, "2026-01-02-latency", "2026-01-02T10:00:00+00:00", latency=_latency(200.0))
    _run(tmp_path, "2026-01-03-quick", "2026-01-03T10:00:00+00:00", mode="quick", latency=_latency(5.0))
    _run(tmp_path, "2026-01-04-broken", "2026-01-04T10:00:00+00:00", manyShards={"error": "RuntimeError: boom"})
    text = page.render(tmp_path, tmp_path / "docs" / "benchmarks.md")

    latency = _row(text, "Micro-batch, polling (2 shards, 200 records/s)")
    assert "p50 200 / 200 ms" in latency and "(../2026-01-02-latency.md)" in latency  # not the quick run's 5 ms
    idle = _row(text, "Idle cost, 1000 shards (driver CPU)")  # the newer run's section failed: the older one stands
    assert "12.0 % of a core" in idle and "**MISS**" in idle and "(../2026-01-01.md)" in idle
    assert "commit `c-2026-01-02-latency`" in text and "c-2026-01-04-broken" not in text
    assert "- **Idle cost, 1000 shards (driver CPU)**: 12.0 % of a core" in text  # listed as a known miss


def test_a_probe_of_chosen_shapes_is_not_the_headline(tmp_path: Path) -> None:
    _run(tmp_path, "2026-01-01", "2026-01-01T10:00:00+00:00", latency=_latency(900.0))
    _run(tmp_path, "2026-01-02-probe", "2026-01-02T10:00:00+00:00", latency=_latency(5.0) | {"headline": False})
    text = page.render(tmp_path, tmp_path / "docs" / "benchmarks.md")
    latency = _row(text, "Micro-batch, polling (2 shards, 200 records/s)")
    assert "p50 900 / 900 ms" in latency and "(../2026-01-01.md)" in latency


def test_the_run_being_rendered_counts_whatever_its_mode(tmp_path: Path) -> None:
    _run(tmp_path, "2026-01-01", "2026-01-01T10:00:00+00:00", latency=_latency(900.0))
    quick = _run(tmp_path, "2026-01-02-quick", "2026-01-02T10:00:00+00:00", mode="quick", latency=_latency(5.0))
    text = page.render(tmp_path, tmp_path / "benchmarks.md", current=quick)
    assert "p50 5 / 5 ms" in _row(text, "Micro-batch, polling (2 shards, 200 records/s)")


def test_an_extra_row_stands_in_only_until_a_run_measures_its_figure_later(tmp_path: Path) -> None:
    log = tmp_path / "run-a.txt"
    log.write_text("the lines a run printed\n")
    extras_file = tmp_path / "extra.md"
    extras_file.write_text(
        "Last edited 2026-01-05.\n\n| key | measured | verdict | started (UTC) | source |\n|---|---|---|---|---|\n"
        "| latency-micro-batch | p50 111 ms by hand | PASS | 2026-01-05T08:00:00+00:00 | run-a.txt |\n"
        "| write-kpl | 9× by hand | PASS | 2026-01-05T08:00:00+00:00 | run-a.txt |\n\n"
        "| file | commit | note |\n|---|---|---|\n| run-a.txt | abc1234 | run A |\n"
    )
    extras = page.load_extras(extras_file, tmp_path)
    _run(tmp_path, "2026-01-01", "2026-01-01T10:00:00+00:00", latency=_latency(900.0))
    text = page.render(tmp_path, tmp_path / "benchmarks.md", extras=extras, extras_path=extras_file)
    assert "p50 111 ms by hand" in _row(text, "Micro-batch, polling (2 shards, 200 records/s)")
    assert "9× by hand" in text and "commit `abc1234`" in text and "(last edited 2026-01-05)" in text

    _run(tmp_path, "2026-01-06", "2026-01-06T10:00:00+00:00", latency=_latency(300.0))
    text = page.render(tmp_path, tmp_path / "benchmarks.md", extras=extras, extras_path=extras_file)
    assert "p50 300 / 300 ms" in _row(text, "Micro-batch, polling (2 shards, 200 records/s)")
    assert "9× by hand" in text  # no run measured aggregation after it


def test_the_hand_kept_extras_name_known_figures_and_files_that_exist() -> None:
    extras = page.load_extras(REPO / "bench" / "headline-extra.md", REPO)
    assert extras.rows and extras.edited
    keys = {f.key for f in page.FIGURES} | {"full-run"}
    for key, (measured, verdict, source) in extras.rows.items():
        assert key in keys, key
        assert verdict in ("PASS", "MISS", "NOT RUN", "–") and measured, key
        assert source.path.is_file() and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", source.started), key


def test_the_page_from_this_repos_results_is_short_and_its_links_resolve() -> None:
    extras_file = REPO / "bench" / "headline-extra.md"
    page_path = REPO / "docs" / "benchmarks.md"
    text = page.render(
        REPO / "bench" / "results", page_path, extras=page.load_extras(extras_file, REPO), extras_path=extras_file
    )
    assert len(text.splitlines()) <= page.MAX_LINES
    assert "not on AWS" in text and "## Known misses" in text and "## Reproduce" in text
    for figure in page.FIGURES:
        assert f"| {figure.label} |" in text, figure.key
    for link in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        assert (page_path.parent / link).exists(), link
