"""The soak's data checks on small hand-made views of a stream: a clean run passes, and each way a connector can
go wrong (a loss, a duplicate, a foreign row, a key out of order) fails the check that names it, while a duplicate
Kinesis itself stored (a producer's resend after a lost answer) is the producer's and passes."""

from __future__ import annotations

import json

from soak.checks import Check, evaluate, key_order_violations
from soak.producer import Ack
from soak.reader import ShardInfo, StreamRecord, lineage_order
from soak.sink import Payload, SinkRow

STREAM = "s"


def data(record_id: str, key: str, n: int) -> str:
    return json.dumps({"id": record_id, "key": key, "n": n}, separators=(",", ":"))


def record(shard: str, seq: int, record_id: str, key: str, n: int) -> StreamRecord:
    d = data(record_id, key, n)
    return StreamRecord((shard, str(seq), 0), key, d, Payload.parse(d))


def rows(batches: list[list[StreamRecord]]) -> list[SinkRow]:
    return [
        SinkRow(b, i, STREAM, r.position, r.data, r.payload)
        for b, batch in enumerate(batches)
        for i, r in enumerate(batch)
    ]


def ack(r: StreamRecord) -> Ack:
    assert r.payload.id is not None and r.payload.key is not None and r.payload.n is not None
    return Ack(r.payload.id, r.payload.key, r.payload.n, r.position[0], r.position[1], 1)


# A split: shard 0 closes, its children 1 and 2 take over; key "a" moves to child 1, key "b" to child 2.
SHARDS = [
    ShardInfo("shard-2", ("shard-0",), False),
    ShardInfo("shard-0", (), True),
    ShardInfo("shard-1", ("shard-0",), False),
]
A0, B0 = record("shard-0", 1, "id-1", "a", 0), record("shard-0", 2, "id-2", "b", 0)
A1 = record("shard-0", 3, "id-3", "a", 1)
A2, B1 = record("shard-1", 10, "id-4", "a", 2), record("shard-2", 11, "id-5", "b", 1)
STORED = {"shard-0": [A0, B0, A1], "shard-1": [A2], "shard-2": [B1]}
ACKED = {r.payload.id: ack(r) for r in (A0, B0, A1, A2, B1) if r.payload.id is not None}


def failed(checks: list[Check]) -> set[str]:
    return {c.name for c in checks if not c.passed}


def test_parents_come_before_their_children() -> None:
    assert lineage_order(SHARDS) == ["shard-0", "shard-1", "shard-2"]
    merged = [ShardInfo("c", ("a", "b"), False), ShardInfo("b", (), True), ShardInfo("a", (), True)]
    assert lineage_order(merged) == ["a", "b", "c"]


def test_a_clean_delivery_passes_every_check() -> None:
    checks, figures = evaluate(STREAM, ACKED, SHARDS, STORED, rows([[A0, B0], [A1, A2, B1]]))
    assert failed(checks) == set()
    assert figures["lost"] == figures["duplicated"] == figures["producerDuplicates"] == 0
    assert figures["read"] == figures["acknowledged"] == 5


def test_a_record_never_delivered_is_lost() -> None:
    checks, figures = evaluate(STREAM, ACKED, SHARDS, STORED, rows([[A0, B0], [A1, B1]]))
    assert failed(checks) == {
        "every acknowledged record is in the sink",
        "every record the stream holds is in the sink",
        "every acknowledged id exactly once (once per copy Kinesis stored)",
    }
    assert figures["lost"] == 1 and figures["lostAcknowledgedIds"] == 1


def test_a_position_delivered_twice_is_the_connectors_duplicate() -> None:
    checks, figures = evaluate(STREAM, ACKED, SHARDS, STORED, rows([[A0, B0], [A1, A2, B1], [A2]]))
    assert "no position delivered twice" in failed(checks)
    assert "every acknowledged id exactly once (once per copy Kinesis stored)" in failed(checks)
    assert figures["duplicated"] == 1


def test_an_id_kinesis_stored_twice_is_the_producers_duplicate_and_must_be_delivered_twice() -> None:
    again = record("shard-1", 12, "id-4", "a", 2)  # the resend of A2 after its answer was lost
    stored = {**STORED, "shard-1": [A2, again]}
    checks, figures = evaluate(STREAM, ACKED, SHARDS, stored, rows([[A0, B0], [A1, A2, again, B1]]))
    assert failed(checks) == set()
    assert figures["producerDuplicates"] == 1 and figures["duplicated"] == 0
    # Delivered once only: the stored copy at 12 is lost.
    checks, figures = evaluate(STREAM, ACKED, SHARDS, stored, rows([[A0, B0], [A1, A2, B1]]))
    assert "every record the stream holds is in the sink" in failed(checks) and figures["lost"] == 1


def test_a_row_the_stream_does_not_hold_is_foreign() -> None:
    ghost = record("shard-1", 99, "id-9", "a", 3)
    checks, _ = evaluate(STREAM, ACKED, SHARDS, STORED, rows([[A0, B0], [A1, A2, B1, ghost]]))
    assert "nothing in the sink that the stream does not hold" in failed(checks)
    altered = StreamRecord(A2.position, "a", data("id-4", "a", 7), Payload("id-4", "a", 7))
    checks, _ = evaluate(STREAM, ACKED, SHARDS, STORED, rows([[A0, B0], [A1, altered, B1]]))
    assert "nothing in the sink that the stream does not hold" in failed(checks)


def test_a_child_read_before_its_parent_breaks_key_order() -> None:
    checks, figures = evaluate(STREAM, ACKED, SHARDS, STORED, rows([[A0, B0, A2], [A1, B1]]))
    assert failed(checks) == {"per-key order in the sink"}
    assert figures["keyOrderViolations"] == 1


def test_the_same_counter_twice_is_in_order_only_as_one_id_at_two_positions() -> None:
    p1, p2 = ("s0", "1", 0), ("s0", "2", 0)
    assert key_order_violations([("k", 1, "x", p1), ("k", 1, "x", p2), ("k", 2, "y", p2)]) == []
    assert len(key_order_violations([("k", 1, "x", p1), ("k", 1, "z", p2)])) == 1
    assert len(key_order_violations([("k", 2, "x", p1), ("k", 1, "z", p2)])) == 1
