"""The producer: boto3 PutRecords outside the connector, the ground truth of what was acknowledged.

Records are keyed (`key-00`..) and numbered per key; the payload is JSON with a run-unique `id`, the `key` and the
key's own counter `n`. Records are generated at a steady rate whatever the faults do (a backlog builds up in a
storm and drains after it) and sent with botocore's retries off, so every resend is the producer's own:

- one PutRecords holds at most one record per key, the key's oldest unacknowledged one, so a key's records are
  stored in counter order even when some entries of a request fail (Kinesis keeps no order between the entries
  of one request that failed and were sent again);
- a failed entry is resent; a request that failed whole (5xx, reset, timeout) is resent whole. If the answer was
  lost after Kinesis stored the records (a timeout, a reset), Kinesis may hold an id twice: the checks count that
  as a producer duplicate, by looking at what the stream holds.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from soak.env import kinesis_client


@dataclass
class Ack:
    """One acknowledged record: where Kinesis said it stored it, and after how many sends."""

    id: str
    key: str
    n: int
    shard: str
    seq: str
    sends: int


@dataclass
class _Pending:
    id: str
    key: str
    n: int
    data: bytes
    sends: int = 0


@dataclass
class ProducerStats:
    generated: int = 0
    acknowledged: int = 0
    requests: int = 0
    failed_requests: Counter[str] = field(default_factory=Counter)
    failed_entries: Counter[str] = field(default_factory=Counter)
    resent_entries: int = 0
    #: entries of requests whose answer never came (timeout, reset): Kinesis may have stored them
    unanswered_entries: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["failed_requests"] = dict(self.failed_requests)
        out["failed_entries"] = dict(self.failed_entries)
        return out


class Producer(threading.Thread):
    """Writes `rate` records per second over `keys` keys until `stop()`, then `drain()` resends until all are in."""

    def __init__(
        self, endpoint: str, stream: str, rate: float, keys: int, id_prefix: str, seed: int, ledger: Path
    ) -> None:
        super().__init__(name="soak-producer", daemon=True)
        self.stream = stream
        self.rate = rate
        self.keys = [f"key-{i:02d}" for i in range(keys)]
        self.id_prefix = id_prefix
        self.rng = random.Random(f"producer:{seed}")
        # Botocore's retries off (the producer resends itself); a read timeout shorter than the simulator's
        # shortest planned hang, so hung requests are answers lost.
        self.client = kinesis_client(endpoint, read_timeout=2.5, retries=1)
        self.pending: dict[str, deque[_Pending]] = {k: deque() for k in self.keys}
        self.counters: dict[str, int] = {k: 0 for k in self.keys}
        self.acked: dict[str, Ack] = {}
        self.stats = ProducerStats()
        self.error: BaseException | None = None
        self._ledger = ledger.open("a")
        self._generating = threading.Event()
        self._generating.set()
        self._done = threading.Event()
        self._lock = threading.Lock()

    # --- the parent's side -----------------------------------------------------------------------------------------
    def stop(self) -> None:
        """No new records from now on; what is pending is still sent."""
        self._generating.clear()

    def pending_count(self) -> int:
        with self._lock:
            return sum(len(q) for q in self.pending.values())

    def drain(self, timeout: float) -> bool:
        """Waits until every generated record is acknowledged (or `timeout`), then ends the thread."""
        deadline = time.monotonic() + timeout
        while self.pending_count() > 0 and time.monotonic() < deadline and self.is_alive():
            time.sleep(0.1)
        drained = self.pending_count() == 0
        self._done.set()
        self.join(30)
        self._ledger.close()
        return drained

    def acknowledged(self) -> dict[str, Ack]:
        with self._lock:
            return dict(self.acked)

    def acknowledged_ids(self) -> set[str]:
        with self._lock:
            return set(self.acked)

    # --- the thread ------------------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self._loop()
        except BaseException as e:  # noqa: BLE001 - reported by the run as a harness failure
            self.error = e

    def _generate(self, started: float) -> None:
        due = int((time.monotonic() - started) * self.rate) - self.stats.generated
        with self._lock:
            for _ in range(max(0, due)):
                key = self.rng.choice(self.keys)
                n = self.counters[key]
                self.counters[key] = n + 1
                record_id = f"{self.id_prefix}-{self.stats.generated:08d}"
                data = json.dumps(
                    {"id": record_id, "key": key, "n": n, "ts": round(time.time(), 3)}, separators=(",", ":")
                ).encode()
                self.pending[key].append(_Pending(record_id, key, n, data))
                self.stats.generated += 1

    def _loop(self) -> None:
        started = time.monotonic()
        backoff = 0.0
        while not self._done.is_set():
            if self._generating.is_set():
                self._generate(started)
            with self._lock:
                batch = [q[0] for q in self.pending.values() if q]
            if not batch:
                time.sleep(0.02)
                continue
            if backoff:
                time.sleep(backoff * self.rng.uniform(0.5, 1.0))
            backoff = self._send(batch, backoff)

    def _send(self, batch: list[_Pending], backoff: float) -> float:
        """One PutRecords; returns the backoff before the next (0 after a clean answer)."""
        for p in batch:
            if p.sends:
                self.stats.resent_entries += 1
            p.sends += 1
        self.stats.requests += 1
        try:
            answer = self.client.put_records(
                StreamName=self.stream, Records=[{"Data": p.data, "PartitionKey": p.key} for p in batch]
            )
        except Exception as e:  # noqa: BLE001 - every failure of the call is retried: that is the producer's job
            # An error answer (ClientError) has a response dict; a call without an answer (ReadTimeoutError and the
            # like) has none, or a `response` of None.
            response = getattr(e, "response", None)
            code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
            self.stats.failed_requests[code or type(e).__name__] += 1
            if code is None:  # no answer at all (timeout, reset, closed): Kinesis may have stored them
                self.stats.unanswered_entries += len(batch)
            return min(1.0, max(0.05, backoff * 2))
        failed = 0
        with self._lock:
            for p, result in zip(batch, answer["Records"]):
                if "SequenceNumber" in result:
                    self.pending[p.key].popleft()
                    ack = Ack(p.id, p.key, p.n, result["ShardId"], result["SequenceNumber"], p.sends)
                    self.acked[p.id] = ack
                    self.stats.acknowledged += 1
                    self._ledger.write(json.dumps(asdict(ack), separators=(",", ":")) + "\n")
                else:
                    failed += 1
                    self.stats.failed_entries[result.get("ErrorCode", "unknown")] += 1
        return min(1.0, max(0.05, backoff * 2)) if failed else 0.0
