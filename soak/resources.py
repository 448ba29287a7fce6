"""The leak check: the driver JVM's heap after a full GC, its threads and its open descriptors at the end of the
run against their level after warm-up, within stated bounds.

A driver SIGKILL makes the driver another process, so levels are compared within one incarnation: the last one.
Driver-ending faults are planned only in the first part of the chaos phase (soak/plan.py, `driver_window`), so the
last incarnation lives through the rest of it under every other fault. Its baseline is its first sample taken at
least `warmup` seconds after its query started; the end level is a sample taken after the query caught up, before
it is stopped.

Threads are counted without Spark's two bounded block-manager pools (soak/driver.py, SPARK_BOUNDED_POOLS), which
grow to 200 threads over a driver's first half minute of batches and shrink after a quiet minute whatever the
connector does; they are reported beside the count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from soak.checks import Check


@dataclass(frozen=True)
class Bounds:
    """End level allowed: heap <= factor x baseline + slack; threads <= baseline + threads; fds <= baseline + fds."""

    heap_factor: float = 1.5
    heap_slack_mib: float = 64.0
    threads: int = 20
    fds: int = 50

    def describe(self) -> str:
        return (
            f"heap after GC <= {self.heap_factor} x warm-up + {self.heap_slack_mib:.0f} MiB, threads (outside "
            f"Spark's bounded block-manager pools) <= warm-up + {self.threads}, open fds <= warm-up + {self.fds}"
        )


def baseline(samples: list[dict[str, Any]], incarnation: int, warmup: float) -> dict[str, Any] | None:
    """The last incarnation's warm-up level: its first sample at least `warmup` s after its query started (else its
    first sample). The last incarnation started after the last driver-ending fault, so from there on it met every
    other fault."""
    own = [s for s in samples if s["incarnation"] == incarnation]
    warm = [s for s in own if s["sinceReady"] >= warmup]
    return warm[0] if warm else (own[0] if own else None)


def leak_check(start: dict[str, Any] | None, end: dict[str, Any] | None, bounds: Bounds) -> Check:
    name = "no leak in the driver (heap after GC, threads, fds)"
    if start is None or end is None:
        return Check(name, False, f"no {'warm-up' if start is None else 'end'} sample of the last driver")
    if start["incarnation"] != end["incarnation"]:
        return Check(name, False, f"warm-up and end samples from different drivers: {start} / {end}")
    over = []
    heap_limit = bounds.heap_factor * start["heapUsedAfterGcMiB"] + bounds.heap_slack_mib
    if end["heapUsedAfterGcMiB"] > heap_limit:
        over.append(f"heap {end['heapUsedAfterGcMiB']} MiB > {heap_limit:.1f}")
    if end["threadsCounted"] > start["threadsCounted"] + bounds.threads:
        over.append(f"threads {end['threadsCounted']} > {start['threadsCounted']} + {bounds.threads}")
    if end["fds"] > start["fds"] + bounds.fds:
        over.append(f"fds {end['fds']} > {start['fds']} + {bounds.fds}")
    stretch = round(end["monotonic"] - start["monotonic"], 1)
    detail = (
        f"driver {end['incarnation']} over {stretch} s: heap {start['heapUsedAfterGcMiB']} -> "
        f"{end['heapUsedAfterGcMiB']} MiB, threads {start['threadsCounted']} -> {end['threadsCounted']} "
        f"(and Spark's "
        f"bounded pools {start['sparkPoolThreads']} -> {end['sparkPoolThreads']}), fds {start['fds']} -> "
        f"{end['fds']} ({bounds.describe()})"
    )
    return Check(name, not over, detail if not over else f"{'; '.join(over)}; {detail}")


def bounds_dict(bounds: Bounds) -> dict[str, Any]:
    return asdict(bounds)
