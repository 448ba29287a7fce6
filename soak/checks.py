"""The soak's verdict on the data: three views of one stream compared, by the id in each record's payload.

- the producer's acknowledgements (what the writer was told is stored),
- the independent reader's copy of the stream (what Kinesis holds, a Kinesis-side duplicate included: the same id
  stored twice because an answer to the producer was lost and it resent),
- the sink (what the query delivered, one row per record and position, in the sink's order).

A Kinesis-side duplicate is the producer's: the sink must then hold that id once per position Kinesis holds it at,
no more, no less. Anything beyond that is the connector's duplicate; anything short of it the connector's loss.
Pure functions over plain data, so they are unit-tested without Spark (soak/tests/test_checks.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from soak.producer import Ack
from soak.reader import ShardInfo, StreamRecord, lineage_order
from soak.sink import Position, SinkRow

#: examples kept per failed check (the whole evidence is in the run's work folder)
EXAMPLES = 20


@dataclass
class Check:
    name: str
    passed: bool
    detail: str
    examples: list[Any] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "detail": self.detail,
            **({"examples": self.examples[:EXAMPLES]} if self.examples else {}),
        }


def _check(name: str, bad: Sequence[Any], ok_detail: str, bad_detail: str) -> Check:
    return Check(name, not bad, ok_detail if not bad else bad_detail.format(n=len(bad)), list(bad[:EXAMPLES]))


#: (key, counter, id, position) of one record, in some order
Keyed = tuple[str | None, int | None, str | None, Position]


def key_order_violations(sequence: Iterable[Keyed]) -> list[dict[str, Any]]:
    """Per key, the counters in the given order must increase; the same counter twice in a row only as the same id
    at another position (a Kinesis-side duplicate). `sequence` holds (key, n, id, position) in order."""
    last: dict[str, tuple[int, str | None, Position]] = {}
    bad: list[dict[str, Any]] = []
    for key, n, record_id, position in sequence:
        if key is None or n is None:
            continue
        previous = last.get(key)
        if previous is not None:
            pn, pid, ppos = previous
            if n < pn or (n == pn and (record_id != pid or position == ppos)):
                bad.append(
                    {
                        "key": key,
                        "previous": {"n": pn, "id": pid, "position": ppos},
                        "next": {"n": n, "id": record_id, "position": position},
                    }
                )
        last[key] = (n, record_id, position)
    return bad


def acknowledged_in_stream(acked: Mapping[str, Ack], in_stream: Mapping[Position, StreamRecord]) -> Check:
    """The ground truth holds together: every acknowledged record is where Kinesis said it stored it."""
    missing = [
        {"id": a.id, "shard": a.shard, "seq": a.seq}
        for a in acked.values()
        if (found := in_stream.get((a.shard, a.seq, 0))) is None or found.payload.id != a.id
    ]
    return _check(
        "acknowledged records are in the stream (independent reader)",
        missing,
        f"all {len(acked)} acknowledged records found where Kinesis acknowledged them",
        "{n} acknowledged records not found by the independent reader (simulator or harness fault)",
    )


def evaluate(
    stream: str,
    acked: Mapping[str, Ack],
    shards: list[ShardInfo],
    stream_records: Mapping[str, list[StreamRecord]],
    sink_rows: list[SinkRow],
) -> tuple[list[Check], dict[str, Any]]:
    """The checks, and the figures of the summary (records produced, read, lost, duplicated)."""
    in_stream: dict[Position, StreamRecord] = {r.position: r for rs in stream_records.values() for r in rs}
    stream_positions_by_id: dict[str, list[Position]] = defaultdict(list)
    for r in in_stream.values():
        if r.payload.id is not None:
            stream_positions_by_id[r.payload.id].append(r.position)
    sink_by_position: Counter[Position] = Counter(r.position for r in sink_rows)
    sink_rows_by_id: Counter[str] = Counter(r.payload.id for r in sink_rows if r.payload.id is not None)

    checks: list[Check] = [acknowledged_in_stream(acked, in_stream)]
    unparseable = [p for p, r in in_stream.items() if r.payload.id is None]
    checks.append(
        _check(
            "the stream holds only the producer's records",
            unparseable,
            f"{len(in_stream)} records, every payload the producer's",
            "{n} records not the producer's",
        )
    )

    lost_ids = sorted(i for i in acked if sink_rows_by_id[i] == 0)
    checks.append(
        _check(
            "every acknowledged record is in the sink",
            lost_ids,
            f"all {len(acked)} acknowledged ids delivered",
            "{n} acknowledged ids never delivered (lost)",
        )
    )
    lost_positions = sorted(p for p in in_stream if sink_by_position[p] == 0)
    checks.append(
        _check(
            "every record the stream holds is in the sink",
            lost_positions,
            f"all {len(in_stream)} stored records delivered",
            "{n} stored records never delivered (lost)",
        )
    )
    duplicated_positions = sorted((p, c) for p, c in sink_by_position.items() if c > 1)
    checks.append(
        _check(
            "no position delivered twice",
            duplicated_positions,
            "each position in one sink row",
            "{n} positions in more than one sink row (connector duplicates)",
        )
    )
    wrong_count = [
        {"id": i, "sinkRows": sink_rows_by_id[i], "storedTimes": len(stream_positions_by_id[i])}
        for i in sorted(acked)
        if sink_rows_by_id[i] != len(stream_positions_by_id[i])
    ]
    checks.append(
        _check(
            "every acknowledged id exactly once (once per copy Kinesis stored)",
            wrong_count,
            "sink rows per id = copies in the stream, for every acknowledged id",
            "{n} ids delivered a different number of times than Kinesis stored them",
        )
    )
    foreign = []
    for row in sink_rows:
        stored = in_stream.get(row.position)
        if row.stream != stream or stored is None or stored.data != row.data:
            foreign.append(
                {
                    "batch": row.batch,
                    "row": row.index,
                    "stream": row.stream,
                    "position": row.position,
                    "why": "wrong stream"
                    if row.stream != stream
                    else "position not in the stream"
                    if stored is None
                    else "data differs from the stream's",
                }
            )
    checks.append(
        _check(
            "nothing in the sink that the stream does not hold",
            foreign,
            f"all {len(sink_rows)} sink rows match the stream",
            "{n} sink rows not in the stream as they are",
        )
    )

    sink_order = key_order_violations((r.payload.key, r.payload.n, r.payload.id, r.position) for r in sink_rows)
    checks.append(
        _check(
            "per-key order in the sink",
            sink_order,
            "each key's counters increase in the sink's order (batch, then row)",
            "{n} places where a key's counter goes back in the sink's order",
        )
    )
    shard_order = lineage_order(shards)
    stream_order = key_order_violations(
        (r.payload.key, r.payload.n, r.payload.id, r.position) for s in shard_order for r in stream_records.get(s, [])
    )
    checks.append(
        _check(
            "per-key order in the stream (the producer's, parents before children)",
            stream_order,
            "each key's counters increase in the stream",
            "{n} places where the stream itself is out of key order (producer or simulator)",
        )
    )

    kinesis_duplicates = {i: len(ps) for i, ps in stream_positions_by_id.items() if len(ps) > 1}
    figures = {
        "acknowledged": len(acked),
        "storedRecords": len(in_stream),
        "storedIds": len(stream_positions_by_id),
        "storedNotAcknowledged": len(set(stream_positions_by_id) - set(acked)),
        "producerDuplicates": sum(c - 1 for c in kinesis_duplicates.values()),
        "producerDuplicatedIds": len(kinesis_duplicates),
        "sinkRows": len(sink_rows),
        "read": len(sink_by_position),
        "lost": len(lost_positions),
        "lostAcknowledgedIds": len(lost_ids),
        "duplicated": sum(c - 1 for c in sink_by_position.values() if c > 1),
        "foreign": len(foreign),
        "keyOrderViolations": len(sink_order),
        "shards": len(shards),
        "closedShards": sum(1 for s in shards if s.closed),
    }
    return checks, figures
