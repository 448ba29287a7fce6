"""The chaos loop: runs the planned faults (soak/plan.py) at their times against the simulator (admin API and
boto3), the driver and its executors, and records what each met. Faults run one after another: one that takes
time (a graceful stop, an executor kill waiting for a restarted driver's executors) moves the rest of the plan by
as much, keeping the planned gaps (the phase gets longer by that); planned and actual times are both in the
timeline.

Storms (throttling, 5xx, resets, hangs, iterator expiry, subscription cuts) last for their planned seconds and may
overlap: the simulator's fault rules are always the union of the storms in force (a PUT replaces them all), and
the quota factor is 0.05 while any throttling storm lasts. At the end of the phase everything is calmed (no rules,
quotas back to AWS's, clock offset 0) before the run drains and reads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from soak import plan as P
from soak.driver import DriverSupervisor
from soak.plan import PlannedFault
from soak.reader import described_shards, list_shards

MIN_SHARDS = 2
MAX_SHARDS = 12


class FaultBoard:
    """The simulator's fault rules and quota factor, as the union of the storms in force."""

    def __init__(self, admin: Any, streams: str | tuple[str, ...], seed: int) -> None:
        # The pipeline modes storm both streams: one rule per stream, each scoped to it.
        self.streams = (streams,) if isinstance(streams, str) else streams
        self.admin, self.seed = admin, seed
        self._rules: list[tuple[float, dict[str, Any]]] = []
        self._throttle_until = 0.0
        self._throttled = False
        self._changes = 0
        self._lock = threading.Lock()

    def add_rule(self, rule: dict[str, Any], seconds: float) -> None:
        with self._lock:
            until = time.monotonic() + seconds
            self._rules.extend((until, {**rule, "stream": stream}) for stream in self.streams)
            self._put_rules()

    def throttle(self, factor: float, seconds: float) -> None:
        with self._lock:
            self._throttle_until = max(self._throttle_until, time.monotonic() + seconds)
            self.admin.quotas(factor=factor)
            self._throttled = True

    def tick(self) -> None:
        """Ends the storms whose time is up."""
        now = time.monotonic()
        with self._lock:
            kept = [(until, rule) for until, rule in self._rules if until > now]
            if len(kept) != len(self._rules):
                self._rules = kept
                self._put_rules()
            if self._throttled and now >= self._throttle_until:
                self.admin.quotas(factor=1.0)
                self._throttled = False

    def _put_rules(self) -> None:
        self._changes += 1
        if self._rules:
            # The simulator's generator restarts from the seed on each change: same plan, same draws per client.
            self.admin.faults(*(rule for _, rule in self._rules), seed=self.seed * 1000 + self._changes)
        else:
            self.admin.clear_faults()

    def calm(self) -> None:
        with self._lock:
            self._rules = []
            self._throttled = False
            self.admin.clear_faults()
            self.admin.settings(quotas={"factor": 1.0}, clockOffsetMs=0)


class Resharder:
    """Splits and merges through boto3, like an operator would, within MIN_SHARDS..MAX_SHARDS open shards."""

    def __init__(self, client: Any, stream: str) -> None:
        self.client, self.stream = client, stream

    def _open(self) -> list[dict[str, Any]]:
        shards = described_shards(self.client, self.stream)
        open_ = [s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]]
        return sorted(open_, key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))

    def reshard(self, kind: str, params: dict[str, Any]) -> dict[str, Any]:
        shards = self._open()
        count = len(shards)
        if params["method"] == "UpdateShardCount":
            target = max(MIN_SHARDS, min(MAX_SHARDS, count + (2 if kind == P.SPLIT else -2)))
            target = max((count + 1) // 2, min(2 * count, target))
            if target == count:
                return {"skipped": f"{count} open shards, at the bound"}
            self.client.update_shard_count(
                StreamName=self.stream, TargetShardCount=target, ScalingType="UNIFORM_SCALING"
            )
            return {"method": "UpdateShardCount", "from": count, "to": target}
        if kind == P.SPLIT:
            if count >= MAX_SHARDS:
                return {"skipped": f"{count} open shards, at the maximum"}
            shard = shards[min(count - 1, int(params["pick"] * count))]
            low, high = int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])
            self.client.split_shard(
                StreamName=self.stream, ShardToSplit=shard["ShardId"], NewStartingHashKey=str((low + high + 1) // 2)
            )
            return {"method": "SplitShard", "shard": shard["ShardId"], "openBefore": count}
        pairs = [
            (a, b)
            for a, b in zip(shards, shards[1:])
            if int(a["HashKeyRange"]["EndingHashKey"]) + 1 == int(b["HashKeyRange"]["StartingHashKey"])
        ]
        if count <= MIN_SHARDS or not pairs:
            return {"skipped": f"{count} open shards, at the minimum"}
        a, b = pairs[min(len(pairs) - 1, int(params["pick"] * len(pairs)))]
        self.client.merge_shards(StreamName=self.stream, ShardToMerge=a["ShardId"], AdjacentShardToMerge=b["ShardId"])
        return {"method": "MergeShards", "shards": [a["ShardId"], b["ShardId"]], "openBefore": count}


#: how long a driver-ending fault waits for the query's first committed batch (see `_first_batch_committed`)
FIRST_COMMIT_TIMEOUT = 240.0


class ChaosLoop(threading.Thread):
    #: a fault that ends within this long of its planned time does not move the plan
    faults_gap_slack = 1.0

    def __init__(
        self,
        faults: list[PlannedFault],
        seconds: float,
        admin: Any,
        client: Any,
        stream: str,
        supervisor: DriverSupervisor,
        board: FaultBoard,
        log: Callable[[str], None],
        reshard_streams: tuple[str, ...] = (),
    ) -> None:
        super().__init__(name="soak-chaos", daemon=True)
        self.faults, self.seconds = faults, seconds
        self.admin, self.stream, self.supervisor, self.board, self.log = admin, stream, supervisor, board, log
        # Splits and merges go to these streams in turn (the fault's index picks): the pipeline modes reshard the
        # sink's stream B twice as often as A, as the writer meets a split of B mid-request.
        self.resharders = [Resharder(client, s) for s in (reshard_streams or (stream,))]
        self.client = client
        self.timeline: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.started = 0.0
        #: how far the plan has been moved by faults that took time
        self.delay = 0.0
        self._abort = threading.Event()

    def abort(self) -> None:
        self._abort.set()

    def run(self) -> None:
        self.started = time.monotonic()
        try:
            for fault in self.faults:
                if not self._wait_until(self.started + self.delay + fault.at):
                    break
                self._run_fault(fault)
                # A fault that took time (a graceful stop, waiting for executors) moves the rest of the plan by as
                # much, so the planned gaps between faults are kept.
                self.delay = max(self.delay, time.monotonic() - self.started - fault.at - self.faults_gap_slack)
            self._wait_until(self.started + self.delay + self.seconds)
        except BaseException as e:  # noqa: BLE001 - reported by the run as a harness failure
            self.error = e
        finally:
            try:
                self.board.calm()
            except Exception as e:  # noqa: BLE001
                self.error = self.error or e

    def _wait_until(self, when: float) -> bool:
        while time.monotonic() < when:
            if self._abort.wait(0.2):
                return False
            self.board.tick()
        return not self._abort.is_set()

    def _run_fault(self, fault: PlannedFault) -> None:
        began = time.monotonic()
        try:
            outcome = self._inject(fault)
        except Exception as e:  # noqa: BLE001 - a fault that could not be injected is recorded, not fatal
            outcome = {"error": f"{type(e).__name__}: {e}"}
        entry = {
            **fault.as_dict(),
            "startedAt": round(began - self.started, 1),
            "seconds": round(time.monotonic() - began, 1),
            "wallClock": round(time.time(), 3),
            "outcome": outcome,
        }
        self.timeline.append(entry)
        self.log(
            f"[chaos +{entry['startedAt']:6.1f}s, planned +{fault.at:6.1f}s] #{fault.index} {fault.kind} "
            f"{fault.params} -> {outcome}"
        )

    def _first_batch_committed(self) -> bool:
        """Waits (bounded) until the query committed a batch. Spark 4.3 refuses to restart a query whose checkpoint has
        no batch yet but a file in `offsets/` (`verifyCheckpointDirectoryEmptyOnStart`, on by default): a stop or
        kill while the first offset-log entry is written leaves its hidden temporary file there (seen: seed
        2026112899, a graceful stop 6.7 s into the phase). A user meets that too (docs/troubleshooting.md); the soak
        is about the connector, so its driver-ending faults wait for the first commit, which moves the plan."""
        deadline = time.monotonic() + FIRST_COMMIT_TIMEOUT
        while not self.supervisor.first_batch_committed():
            if time.monotonic() > deadline or self._abort.wait(0.5):
                return False
            self.board.tick()
        return True

    def _inject(self, fault: PlannedFault) -> dict[str, Any]:
        k, p = fault.kind, fault.params
        if k in (P.SPLIT, P.MERGE):
            resharder = self.resharders[fault.index % len(self.resharders)]
            return {"stream": resharder.stream, **resharder.reshard(k, p)}
        if k == P.THROTTLE_STORM:
            self.board.throttle(p["factor"], p["seconds"])
            return {"quotaFactor": p["factor"], "for": p["seconds"]}
        if k == P.HTTP5XX_STORM:
            self.board.add_rule({"kind": p["fault"], "probability": p["probability"]}, p["seconds"])
            return {"rule": p["fault"], "for": p["seconds"]}
        if k == P.RESET_STORM:
            self.board.add_rule({"kind": "reset", "probability": p["probability"]}, p["seconds"])
            return {"rule": "reset", "for": p["seconds"]}
        if k == P.HANG_STORM:
            self.board.add_rule(
                {
                    "kind": "hang",
                    "probability": p["probability"],
                    "hangMillis": p["hangMillis"],
                    "maxCount": p["maxCount"],
                },
                p["seconds"],
            )
            return {"rule": "hang", "for": p["seconds"]}
        if k == P.ITERATOR_EXPIRY:
            if p["how"] == "expireAll":
                self.admin.expire_iterators()
                return {"expired": "every iterator issued so far"}
            self.board.add_rule({"kind": "expireIterator", "probability": p["probability"]}, p["seconds"])
            return {"rule": "expireIterator", "for": p["seconds"]}
        if k == P.CUT_SUBSCRIPTION:
            self.board.add_rule(
                {
                    "kind": "cutSubscription",
                    "afterEvents": p["afterEvents"],
                    "probability": p["probability"],
                    "operations": ["SubscribeToShard"],
                },
                p["seconds"],
            )
            return {"rule": "cutSubscription", "for": p["seconds"]}
        if k == P.SLOW_ANSWER:
            # The simulator waits, then serves the request: the records are stored after the client gave up on it.
            self.board.add_rule(
                {
                    "kind": "latency",
                    "latencyMillis": p["latencyMillis"],
                    "probability": p["probability"],
                    "operations": ["PutRecords"],
                },
                p["seconds"],
            )
            return {"rule": "latency", "for": p["seconds"]}
        if k == P.CLOCK_OFFSET:
            self.admin.settings(clockOffsetMs=p["ms"])
            return {"clockOffsetMs": p["ms"]}
        if k == P.EXECUTOR_KILL:
            return self.supervisor.kill_executor(p["pick"])
        if k in P.DRIVER_ENDING:
            waited = time.monotonic()
            if not self._first_batch_committed():
                return {"skipped": f"no batch committed within {FIRST_COMMIT_TIMEOUT:.0f} s"}
            waited = round(time.monotonic() - waited, 1)
            if k == P.DRIVER_KILL:
                killed = self.supervisor.kill()
                return {"killed": killed, "restarted": self.supervisor.restart(), "waitedForFirstCommit": waited}
            stopped = self.supervisor.stop_gracefully()
            return {"stopped": stopped, "restarted": self.supervisor.restart(), "waitedForFirstCommit": waited}
        raise ValueError(f"unknown fault kind {k}")


def shard_count(client: Any, stream: str) -> tuple[int, int]:
    """(open, all) shards of the stream."""
    shards = list_shards(client, stream)
    return sum(1 for s in shards if not s.closed), len(shards)
