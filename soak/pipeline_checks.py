"""The pipeline modes' verdict: stream A (what the producer wrote, read by the independent reader) against stream B
(what the connector's sink wrote while the source read A, read the same way, de-aggregated, misplaced aggregates
skipped as the KCL skips them), by the tag each copy carries (soak/driver_job.py: A's position, the driver
incarnation that wrote it, the executor's clock when the row was computed).

The sink is at-least-once: Kinesis has no idempotent put, so B may hold a record of A more than once, and only for
three reasons, each told apart by the tag:

- *replayed after a restart*: copies written by different driver incarnations (a batch the last driver had not
  committed, written again by the next);
- *task retried*: copies from one incarnation, but from different computations of the row (an executor lost, a
  task failed, and Spark ran the task again: it computes its rows again);
- *resent after a lost answer*: copies of the same computation, byte for byte (a PutRecords whose answer was lost to a reset, a hang
  or a 5xx after the records were stored, resent by the sink).

Per-key order is over first occurrences (`preserveKeyOrder=true`): a duplicate comes after the original, which is
at-least-once's, but the first copy of each record (by the producer's id, so a record A holds twice is one record)
must come in the key's order. One exception is documented
(docs/writing.md, "Resharding"): user records sent again after a misplaced aggregate come after later records of
their key; a place where the key goes back at such a record is counted apart, as explained.
Pure functions over plain data, unit-tested without Spark (soak/tests/test_soak_pipeline.py).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from soak.checks import Check, _check, acknowledged_in_stream, key_order_violations
from soak.pipeline_reader import Copy, Misplaced
from soak.producer import Ack
from soak.reader import StreamRecord
from soak.sink import Position

REPLAYED = "replayed after a restart"
RETRIED = "task retried"
RESENT = "resent after a lost answer"


def duplicate_causes(copies: Sequence[Copy]) -> dict[Position, Counter[str]]:
    """Per A position held more than once: how many extra copies, by cause. The first incarnation, the first computation
    in each incarnation and the first copy of each computation are the originals; every other copy is extra."""
    by_src: dict[Position, list[Copy]] = defaultdict(list)
    for c in copies:
        if c.tag is not None:
            by_src[c.tag.src].append(c)
    out: dict[Position, Counter[str]] = {}
    for src, held in by_src.items():
        if len(held) < 2:
            continue
        computations: dict[int, Counter[str]] = defaultdict(Counter)
        for c in held:
            assert c.tag is not None
            computations[c.tag.incarnation][c.tag.evaluation] += 1
        causes: Counter[str] = Counter()
        causes[REPLAYED] = len(computations) - 1
        causes[RETRIED] = sum(len(per) - 1 for per in computations.values())
        causes[RESENT] = sum(n - 1 for per in computations.values() for n in per.values())
        out[src] = +causes
    return out


def evaluate_pipeline(
    acked: Mapping[str, Ack],
    a_records: Mapping[str, list[StreamRecord]],
    b_copies: Sequence[Copy],
    misplaced: Sequence[Misplaced],
    put_faults_fired: int,
) -> tuple[list[Check], dict[str, Any]]:
    """The checks and the figures. `b_copies` are in B's order (shards in lineage order, parents first, each by
    sequence and sub-sequence number); `put_faults_fired` is how many faults the simulator fired on PutRecords to
    B (resets, hangs, 5xx: each may lose an answer after the records were stored)."""
    in_a: dict[Position, StreamRecord] = {r.position: r for rs in a_records.values() for r in rs}
    checks: list[Check] = [acknowledged_in_stream(acked, in_a)]

    copied = Counter(c.tag.src for c in b_copies if c.tag is not None)
    lost = sorted(p for p in in_a if copied[p] == 0)
    checks.append(
        _check(
            "every record of A is in B",
            lost,
            f"all {len(in_a)} records of A written to B",
            "{n} records of A not in B (lost)",
        )
    )

    foreign = []
    for c in b_copies:
        original = in_a.get(c.tag.src) if c.tag is not None else None
        why = (
            "not tagged by the query"
            if c.tag is None
            else "its source position is not in A"
            if original is None
            else "data differs from A's"
            if c.tag.payload != json.loads(original.data)
            else "partition key differs from A's"
            if c.partition_key != original.partition_key
            else None
        )
        if why is not None:
            foreign.append({"position": c.position, "why": why})
    checks.append(
        _check(
            "everything in B is a record of A as A holds it",
            foreign,
            f"all {len(b_copies)} user records of B match A",
            "{n} user records of B not in A as they are",
        )
    )

    causes = duplicate_causes(b_copies)
    by_cause: Counter[str] = sum(causes.values(), Counter())
    unexplained = (
        [{"cause": RESENT, "copies": by_cause[RESENT], "why": "no fault fired on PutRecords to B"}]
        if by_cause[RESENT] and put_faults_fired == 0
        else []
    )
    checks.append(
        _check(
            "every duplicate has a cause the run made possible",
            unexplained,
            "duplicates by cause: " + (", ".join(f"{k} {v}" for k, v in sorted(by_cause.items())) or "none"),
            "{n} kinds of duplicate without a fault that could cause them",
        )
    )

    # A record is its producer's id: when A holds one twice (the producer resent it after an answer that came too
    # late, and the late request was stored after later records of its key), the copy of the later one in B is a
    # repeat, not a first occurrence. Seen with the slow-answer fault (seed 2026112851): by A position, every such
    # copy counted as a key going back.
    first: list[tuple[str | None, int | None, str | None, Position]] = []
    seen: set[str | Position] = set()
    for c in b_copies:
        if c.tag is None:
            continue
        p = c.payload
        record: str | Position = p.id if p.id is not None else c.tag.src
        if record not in seen:
            seen.add(record)
            first.append((p.key, p.n, p.id, c.tag.src))
    violations = key_order_violations(first)
    resent_after_misplaced = {t.src for m in misplaced for _, _, t in m.records if t is not None}
    explained = [v for v in violations if v["next"]["position"] in resent_after_misplaced]
    unexplained_order = [v for v in violations if v["next"]["position"] not in resent_after_misplaced]
    checks.append(
        _check(
            "per-key order of first occurrences in B (preserveKeyOrder=true)",
            unexplained_order,
            f"each key's counters increase over first copies ({len(explained)} places behind a record sent again "
            "after a misplaced aggregate, as documented)",
            "{n} places where a key's counter goes back in B",
        )
    )

    duplicates = sum(by_cause.values())
    figures = {
        "acknowledged": len(acked),
        "storedRecords": len(in_a),
        "producerDuplicatesInA": len(in_a) - len({r.payload.id for r in in_a.values()}),
        "bUserRecords": len(b_copies),
        "lost": len(lost),
        "duplicated": duplicates,
        "duplicateRate": round(duplicates / len(in_a), 6) if in_a else 0.0,
        "duplicatesByCause": dict(sorted(by_cause.items())),
        "duplicatedRecords": len(causes),
        "foreign": len(foreign),
        "keyOrderViolations": len(unexplained_order),
        "keyOrderBehindMisplacedResend": len(explained),
        "misplacedAggregatesSkipped": len(misplaced),
        "misplacedUserRecordsSkipped": sum(len(m.records) for m in misplaced),
        "putRecordsFaultsFired": put_faults_fired,
    }
    return checks, figures
