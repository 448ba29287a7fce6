"""The fault timeline, drawn from the seed before anything runs: a run is replayed by drawing the same plan again.

The plan fixes each fault's kind, its planned time (seconds after the chaos phase starts) and every parameter a
fault needs (durations, probabilities, which shard or executor it picks, as a fraction so the choice does not
depend on how many there are). What it meets when it runs (the shards then open, the executors then up) is
recorded beside it by the chaos loop; against the simulator's deterministic shard ids the same plan reshards the
same way.

Kinds are dealt from a shuffled bag (every kind once, in a random order, then a new bag), not drawn independently:
a short run still meets every kind of its menu, and a long one meets them evenly. A bag holds one fault that ends
the driver (graceful query restart and SIGKILL take turns, bag by bag): a driver takes 15-35 s to start on two
busy cores, and with both in every bag a query spent most of its time starting. They are left out of the bags once
`driver_window` of the phase has passed: the rest of the phase is the stretch over which the last driver's heap,
threads and file descriptors are compared.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

SPLIT = "split"
MERGE = "merge"
THROTTLE_STORM = "throttle_storm"
HTTP5XX_STORM = "http5xx_storm"
RESET_STORM = "reset_storm"
HANG_STORM = "hang_storm"
ITERATOR_EXPIRY = "iterator_expiry"
CUT_SUBSCRIPTION = "cut_subscription"
QUERY_RESTART = "query_restart"
DRIVER_KILL = "driver_kill"
EXECUTOR_KILL = "executor_kill"
CLOCK_OFFSET = "clock_offset"
SLOW_ANSWER = "slow_answer"

ALL_KINDS = (
    SPLIT,
    MERGE,
    THROTTLE_STORM,
    HTTP5XX_STORM,
    RESET_STORM,
    HANG_STORM,
    ITERATOR_EXPIRY,
    CUT_SUBSCRIPTION,
    QUERY_RESTART,
    DRIVER_KILL,
    EXECUTOR_KILL,
    CLOCK_OFFSET,
    SLOW_ANSWER,
)
#: faults after which the driver is another process
DRIVER_ENDING = frozenset({QUERY_RESTART, DRIVER_KILL})
#: what only an enhanced fan-out reader meets
EFO_ONLY = frozenset({CUT_SUBSCRIPTION})
#: what only the pipeline modes meet: an answer to PutRecords that comes after the sink gave up on it (the records
#: stored all the same), the one way the simulator makes a writer resend what Kinesis already holds
PIPELINE_ONLY = frozenset({SLOW_ANSWER})

#: `full` is `make soak`'s; `short` is the 60-second pytest's (what the brief asks at least, and the EFO cut)
MENUS: dict[str, tuple[str, ...]] = {
    "full": ALL_KINDS,
    "short": (SPLIT, THROTTLE_STORM, HTTP5XX_STORM, DRIVER_KILL, EXECUTOR_KILL, CLOCK_OFFSET, CUT_SUBSCRIPTION),
}


@dataclass(frozen=True)
class PlanSettings:
    """What shapes a plan besides the seed; all of it goes into the timeline file."""

    seconds: float
    menu: str = "full"
    gap_min: float = 3.0
    gap_max: float = 7.0
    driver_window: float = 0.6


@dataclass(frozen=True)
class PlannedFault:
    index: int
    at: float
    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def menu_for(menu: str, mode: str) -> tuple[str, ...]:
    """The menu's kinds a run in `mode` can meet (a subscription cut only reaches enhanced fan-out, a slow answer to
    PutRecords matters only to the pipeline modes' sink). Filtering keeps the reader modes' plans as they were."""
    if menu not in MENUS:
        raise ValueError(f"unknown fault menu '{menu}'; known: {', '.join(MENUS)}")
    return tuple(
        k
        for k in MENUS[menu]
        if (mode == "efo" or k not in EFO_ONLY) and (mode.startswith("pipeline") or k not in PIPELINE_ONLY)
    )


def _params(kind: str, rng: random.Random) -> dict[str, Any]:
    """A fault's parameters. Storms last 3-8 s, the brief's "a few seconds"."""

    def storm() -> float:
        return round(rng.uniform(3.0, 8.0), 1)

    if kind in (SPLIT, MERGE):
        # Mostly one SplitShard/MergeShards on a shard picked by `pick`; sometimes UpdateShardCount by two.
        single = "SplitShard" if kind == SPLIT else "MergeShards"
        return {"method": "UpdateShardCount" if rng.random() < 0.3 else single, "pick": round(rng.random(), 4)}
    if kind == THROTTLE_STORM:
        return {"factor": 0.05, "seconds": storm()}
    if kind == HTTP5XX_STORM:
        return {
            "fault": rng.choice(["http500", "http503"]),
            "probability": rng.choice([0.1, 0.3, 0.5]),
            "seconds": storm(),
        }
    if kind == RESET_STORM:
        return {"probability": rng.choice([0.1, 0.2, 0.3]), "seconds": storm()}
    if kind == HANG_STORM:
        # Mostly hangs the simulator ends itself (it closes the connection); now and then one past the connector's
        # 30 s apiCallAttemptTimeout, which the client has to cut.
        return {
            "probability": rng.choice([0.05, 0.1, 0.2]),
            "hangMillis": rng.choice([3000, 8000, 15000, 35000]),
            "maxCount": rng.choice([2, 5, 10]),
            "seconds": storm(),
        }
    if kind == ITERATOR_EXPIRY:
        return {"how": rng.choice(["expireAll", "fault"]), "probability": 0.5, "seconds": storm()}
    if kind == CUT_SUBSCRIPTION:
        return {"afterEvents": rng.randint(1, 5), "probability": rng.choice([0.3, 0.6, 1.0]), "seconds": storm()}
    if kind == SLOW_ANSWER:
        # Later than the pipeline sink's 5 s apiCallAttemptTimeout (soak/driver_job.py), so the sink resends.
        return {
            "latencyMillis": rng.choice([6000, 8000]),
            "probability": rng.choice([0.1, 0.2, 0.3]),
            "seconds": storm(),
        }
    if kind == EXECUTOR_KILL:
        return {"pick": round(rng.random(), 4)}
    if kind == CLOCK_OFFSET:
        return {"ms": rng.choice([-5000, -2500, -1000, 0, 1000, 2500, 5000])}
    return {}


def plan(seed: int, mode: str, settings: PlanSettings) -> list[PlannedFault]:
    """The run's faults for one reader mode. Same seed, mode and settings: the same list."""
    rng = random.Random(f"soak:{seed}:{mode}:{settings.menu}")
    kinds = menu_for(settings.menu, mode)
    enders = [k for k in kinds if k in DRIVER_ENDING]
    faults: list[PlannedFault] = []
    bag: list[str] = []
    bags = 0
    at = 0.0
    while True:
        at = round(at + rng.uniform(settings.gap_min, settings.gap_max), 1)
        if at >= settings.seconds:
            return faults
        in_window = at < settings.driver_window * settings.seconds
        if not in_window:
            bag = [k for k in bag if k not in DRIVER_ENDING]
        if not bag:
            bag = [k for k in kinds if k not in DRIVER_ENDING]
            if in_window and enders:
                bag.append(enders[bags % len(enders)])
            bags += 1
            rng.shuffle(bag)
        kind = bag.pop()
        faults.append(PlannedFault(len(faults), at, kind, _params(kind, rng)))
