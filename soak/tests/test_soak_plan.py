"""The fault plan is the replay: the same seed draws the same timeline, and the plan keeps its promises (every kind
of a short menu early, driver-ending faults only inside the driver window, a subscription cut only for EFO)."""

from __future__ import annotations

from soak import plan as P
from soak.resources import Bounds, baseline, leak_check
from soak.run import SoakSettings, replay_command


def test_the_same_seed_draws_the_same_timeline_and_another_seed_another() -> None:
    settings = P.PlanSettings(600)
    assert P.plan(42, "efo", settings) == P.plan(42, "efo", settings)
    assert P.plan(42, "efo", settings) != P.plan(43, "efo", settings)
    assert P.plan(42, "efo", settings) != P.plan(42, "polling", settings)


def test_a_ten_minute_plan_meets_every_kind_and_ends_drivers_only_in_its_window() -> None:
    settings = P.PlanSettings(600)
    for mode in ("polling", "efo"):
        faults = P.plan(1, mode, settings)
        assert {f.kind for f in faults} == set(P.menu_for("full", mode))
        assert all(f.at < settings.driver_window * 600 for f in faults if f.kind in P.DRIVER_ENDING)
        assert all(settings.gap_min <= b.at - a.at <= settings.gap_max + 0.1 for a, b in zip(faults, faults[1:]))
    assert P.CUT_SUBSCRIPTION not in {f.kind for f in P.plan(1, "polling", settings)}


def test_a_short_plan_meets_its_whole_menu_within_the_driver_window() -> None:
    settings = P.PlanSettings(60, "short", 3.0, 5.0)
    for seed in range(50):
        for mode in ("polling", "efo"):
            faults = P.plan(seed, mode, settings)
            kinds = P.menu_for("short", mode)
            first = [f.kind for f in faults[: len(kinds)]]
            assert sorted(first) == sorted(kinds), (seed, mode, first)


def test_the_leak_check_compares_the_last_drivers_warm_level_with_its_end() -> None:
    def sample(incarnation: int, since: float, heap: float, threads: int, fds: int) -> dict[str, float]:
        return {
            "incarnation": incarnation,
            "sinceReady": since,
            "monotonic": 1000 + since,
            "heapUsedAfterGcMiB": heap,
            "threadsCounted": threads,
            "sparkPoolThreads": 0,
            "fds": fds,
        }

    samples = [sample(1, 40, 500, 500, 500), sample(2, 5, 60, 100, 380), sample(2, 35, 80, 140, 400)]
    start = baseline(samples, 2, 30)
    assert start is not None and start["threadsCounted"] == 140
    bounds = Bounds()
    assert leak_check(start, sample(2, 300, 180, 160, 450), bounds).passed
    assert not leak_check(start, sample(2, 300, 190, 140, 400), bounds).passed  # heap > 1.5 x 80 + 64
    assert not leak_check(start, sample(2, 300, 80, 161, 400), bounds).passed
    assert not leak_check(start, sample(2, 300, 80, 140, 451), bounds).passed
    assert not leak_check(start, None, bounds).passed


def test_a_run_prints_the_make_line_that_replays_its_plan() -> None:
    assert replay_command(SoakSettings(seed=5, seconds=600)) == "make soak SEED=5 MINUTES=10"
    short = SoakSettings(seed=121, seconds=60, modes=("efo",), menu="short", gap_max=5.0, warmup=10.0)
    assert replay_command(short) == (
        'make soak SEED=121 MINUTES=1 SOAK_ARGS="--modes efo --menu short --gap-max 5 --warmup 10"'
    )
