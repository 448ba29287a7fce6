"""`make demo`'s pipeline, run briefly: it writes with the sink, reads with the source and prints counts per page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "examples" / "clickstream.py"


def test_the_demo_prints_windowed_counts_per_page_and_stops_by_itself() -> None:
    run = subprocess.run([sys.executable, str(DEMO), "--seconds", "45", "--rate", "20"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "kinesis-mock is up at http://127.0.0.1:" in run.stdout
    assert "|window" in run.stdout and "|page" in run.stdout, run.stdout[-3000:]
    assert any(f"|{page}" in run.stdout for page in ("home", "search", "product", "cart", "checkout"))
    assert "demo finished" in run.stdout
