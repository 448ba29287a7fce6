"""`make test`'s form of the soak: 60 s of chaos in one mode, the short menu, a fault every 3-5 s, a warm-up of
10 s; every check asserted here, the rest by the test that runs it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from soak.run import SoakSettings, run


def run_sixty_seconds(seed: int, mode: str, out: Path) -> tuple[SoakSettings, dict[str, Any]]:
    """The settings and the mode's summary, once every check passed."""
    settings = SoakSettings(
        seed=seed,
        seconds=60,
        modes=(mode,),
        menu="short",
        gap_min=3.0,
        gap_max=5.0,
        warmup=10.0,
        sample_every=5.0,
        catchup_timeout=150.0,
        out=out,
    )
    summary, code = run(settings)
    [result] = summary["modes"]
    failed = [c for c in result["checks"] if not c["passed"]]
    assert not failed, json.dumps(failed, indent=2, default=str)[:6000]
    assert code == 0 and summary["passed"]
    return settings, result
