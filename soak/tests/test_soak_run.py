"""`make soak` in `make test`: the chaos soak for 60 s per reader mode with a fixed seed and the short fault menu
(split, throttling storm, 5xx storm, driver SIGKILL and restart, executor kill, clock offset; a subscription cut
for EFO), a fault every 3-5 s, every check asserted. About 95 s per mode on two cores (the driver's start is a
quarter of it). Each mode starts a simulator and a `spark-submit` driver on
`local-cluster[2,1,1024]` of its own, one after the other. The work folder (driver logs, sink, checkpoint) stays in
pytest's tmp folder when a check fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from soak import plan as P
from soak.tests.sixty_seconds import run_sixty_seconds

#: a seed whose short plans (both modes) kill an executor under the running query first, the driver once and early
#: (at 12.8 s polling, 7.0 s EFO, so its successor runs and warms up well before the end), and executors again later
SEED = 121
#: faults the brief asks the 60-second run to meet at least, each with an effect (not skipped)
REQUIRED = {P.SPLIT, P.THROTTLE_STORM, P.HTTP5XX_STORM, P.DRIVER_KILL, P.EXECUTOR_KILL, P.CLOCK_OFFSET}


@pytest.mark.parametrize("mode", ["polling", "efo"])
def test_sixty_seconds_of_chaos_lose_nothing_duplicate_nothing_and_keep_key_order(mode: str, tmp_path: Path) -> None:
    settings, result = run_sixty_seconds(SEED, mode, tmp_path)

    effective = {e["kind"] for e in result["timeline"] if not any(k in e["outcome"] for k in ("skipped", "error"))}
    assert REQUIRED <= effective, f"faults without effect: {REQUIRED - effective}; timeline {result['timeline']}"
    assert any(e["outcome"].get("queryRunning") for e in result["timeline"] if e["kind"] == P.EXECUTOR_KILL), (
        "no executor was killed under a running query"
    )
    figures = result["figures"]
    assert figures["acknowledged"] > 3000 and figures["read"] == figures["storedRecords"]
    assert figures["lost"] == figures["duplicated"] == figures["foreign"] == figures["keyOrderViolations"] == 0
    assert figures["shards"] > settings.shards  # the split happened and its children were read
    assert [d["ended"] for d in result["drivers"]][-2:] == ["killed", "stopped"]
    assert list(tmp_path.glob("*-timeline.json")) and list(tmp_path.glob("*s.json"))
