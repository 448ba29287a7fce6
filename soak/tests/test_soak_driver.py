"""The supervisor's view of the checkpoint: driver-ending faults wait until it holds a committed batch, because a
restart before that meets Spark's check that a new query's checkpoint is empty (docs/dev/soak.md, "a restart
before the first commit")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from soak import chaos
from soak import plan as P
from soak.chaos import ChaosLoop
from soak.driver import DriverSupervisor
from soak.plan import PlannedFault


def test_only_a_committed_batch_counts_not_the_temporary_file_an_interrupted_write_leaves(tmp_path: Path) -> None:
    supervisor = DriverSupervisor(tmp_path, "http://127.0.0.1:1", "s", "polling", "connector.jar", "spark-home")
    assert not supervisor.first_batch_committed()
    (tmp_path / "checkpoint" / "offsets").mkdir(parents=True)
    (tmp_path / "checkpoint" / "offsets" / "0").write_text("v1")
    (tmp_path / "checkpoint" / "commits").mkdir()
    (tmp_path / "checkpoint" / "commits" / ".0.5f0e.tmp").write_text("")
    assert not supervisor.first_batch_committed(), "planned and half-written is not committed"
    (tmp_path / "checkpoint" / "commits" / "0").write_text("v1")
    assert supervisor.first_batch_committed()


class _Board:
    """The fault board without a simulator: nothing to storm here."""

    def tick(self) -> None:
        pass

    def calm(self) -> None:
        pass


class _Supervisor:
    """A driver whose first batch commits after `commits_after` looks at the checkpoint."""

    def __init__(self, commits_after: int | None) -> None:
        self.commits_after, self.looks, self.killed = commits_after, 0, False

    def first_batch_committed(self) -> bool:
        self.looks += 1
        return self.commits_after is not None and self.looks > self.commits_after

    def kill(self) -> dict[str, Any]:
        self.killed = True
        return {"incarnation": 1}

    def restart(self) -> dict[str, Any]:
        return {"incarnation": 2}


def _run(supervisor: _Supervisor) -> dict[str, Any]:
    loop = ChaosLoop([PlannedFault(0, 0.0, P.DRIVER_KILL)], 0.1, None, None, "s", supervisor, _Board(), print)  # type: ignore[arg-type]
    loop.run()
    assert loop.error is None
    [entry] = loop.timeline
    return dict(entry["outcome"])


def test_a_driver_ending_fault_waits_for_the_first_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor = _Supervisor(commits_after=2)
    outcome = _run(supervisor)
    assert (
        supervisor.killed and supervisor.looks == 3 and outcome["waitedForFirstCommit"] >= 0.9
    )  # two looks 0.5 s apart
    monkeypatch.setattr(chaos, "FIRST_COMMIT_TIMEOUT", 1.0)
    never = _Supervisor(commits_after=None)
    assert "skipped" in _run(never) and not never.killed
