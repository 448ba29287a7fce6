"""The pipeline modes' checks (duplicates by cause, loss, foreign copies, per-key order of first occurrences) on
plain data, and their reader of stream B against the simulator: KPL aggregates put by aws-kinesis-agg are split,
and one holding a user record outside its shard's hash-key range is skipped whole, as the KCL skips it."""

from __future__ import annotations

import json
import uuid
from typing import Any

from aws_kinesis_agg.aggregator import RecordAggregator  # type: ignore[import-untyped]

from bench.env import boto3_client
from soak import plan as P
from soak.pipeline_checks import REPLAYED, RESENT, RETRIED, duplicate_causes, evaluate_pipeline
from soak.pipeline_reader import Copy, Misplaced, StreamTail, Tag
from soak.producer import Ack
from soak.reader import StreamRecord
from soak.sink import Payload, Position


def _a(n: int, key: str = "key-00") -> StreamRecord:
    data = json.dumps({"id": f"r{n}", "key": key, "n": n})
    return StreamRecord(("shardId-000000000000", f"{n:03d}", 0), key, data, Payload.parse(data))


def _copy(record: StreamRecord, b_seq: int, incarnation: int = 1, evaluation: str = "5") -> Copy:
    tag = Tag(record.position, incarnation, evaluation, json.loads(record.data))
    return Copy(("shardId-000000000000", f"{b_seq:03d}", 0), record.partition_key, tag)


def _ack(r: StreamRecord) -> Ack:
    return Ack(str(r.payload.id), r.partition_key, int(r.payload.n or 0), r.position[0], r.position[1], 1)


def test_duplicates_are_told_apart_by_incarnation_and_computation() -> None:
    r = _a(0)
    copies = [
        _copy(r, 1, incarnation=1, evaluation="5"),
        _copy(r, 2, incarnation=1, evaluation="5"),  # the same bytes again: a resend
        _copy(r, 3, incarnation=1, evaluation="9"),  # computed again: a retried task
        _copy(r, 4, incarnation=2, evaluation="5"),  # the next driver's replay
        _copy(_a(1), 5),
    ]
    assert duplicate_causes(copies) == {r.position: {RESENT: 1, RETRIED: 1, REPLAYED: 1}}


def _verdict(
    a: list[StreamRecord], b: list[Copy], misplaced: list[Misplaced] | None = None, put_faults: int = 1
) -> tuple[dict[str, bool], dict[str, Any]]:
    checks, figures = evaluate_pipeline(
        {str(r.payload.id): _ack(r) for r in a}, {"shardId-000000000000": a}, b, misplaced or [], put_faults
    )
    return {c.name.split(" (")[0]: c.passed for c in checks}, figures


def test_a_clean_copy_passes_and_a_lost_record_fails() -> None:
    a = [_a(n) for n in range(3)]
    passed, figures = _verdict(a, [_copy(r, i) for i, r in enumerate(a)])
    assert all(passed.values()) and figures["lost"] == figures["duplicated"] == 0
    passed, figures = _verdict(a, [_copy(a[0], 0), _copy(a[2], 2)])
    assert not passed["every record of A is in B"] and figures["lost"] == 1


def test_a_copy_with_other_data_or_key_is_foreign() -> None:
    a = [_a(0)]
    wrong = Copy(("shardId-000000000000", "000", 0), "key-99", _copy(a[0], 0).tag)
    passed, figures = _verdict(a, [wrong])
    assert not passed["everything in B is a record of A as A holds it"] and figures["foreign"] == 1


def test_a_resent_duplicate_needs_a_fault_on_putrecords() -> None:
    a = [_a(0)]
    b = [_copy(a[0], 0), _copy(a[0], 1)]
    assert _verdict(a, b, put_faults=3)[0]["every duplicate has a cause the run made possible"]
    assert not _verdict(a, b, put_faults=0)[0]["every duplicate has a cause the run made possible"]


def test_key_order_is_over_first_occurrences_and_a_misplaced_resend_is_explained() -> None:
    a = [_a(n) for n in range(3)]
    # A replayed copy of record 0 after record 2: order holds over first occurrences.
    passed, _ = _verdict(a, [_copy(a[0], 0), _copy(a[1], 1), _copy(a[2], 2), _copy(a[0], 3, incarnation=2)])
    assert passed["per-key order of first occurrences in B"]
    # Record 1 first seen after record 2: a violation...
    out_of_order = [_copy(a[0], 0), _copy(a[2], 1), _copy(a[1], 2)]
    passed, figures = _verdict(a, out_of_order)
    assert not passed["per-key order of first occurrences in B"] and figures["keyOrderViolations"] == 1
    # ...unless record 1's first copy was in an aggregate the reader skipped as misplaced (sent again by the sink).
    skipped = Misplaced("shardId-000000000000", "009", ((0, "key-00", out_of_order[2].tag),))
    passed, figures = _verdict(a, out_of_order, [skipped])
    assert passed["per-key order of first occurrences in B"] and figures["keyOrderBehindMisplacedResend"] == 1


def test_a_record_a_holds_twice_is_one_record_for_key_order() -> None:
    # The producer's answer came late: it resent record 1, and the late request was stored after record 2.
    a = [_a(0), _a(1), _a(2)]
    late = StreamRecord(("shardId-000000000000", "003", 0), "key-00", a[1].data, a[1].payload)
    a.append(late)
    passed, figures = _verdict(a, [_copy(r, i) for i, r in enumerate(a)])
    assert passed["per-key order of first occurrences in B"] and passed["every record of A is in B"]
    assert figures["producerDuplicatesInA"] == 1 and figures["duplicated"] == 0
    # The late copy missing from B is a loss all the same.
    passed, _ = _verdict(a, [_copy(r, i) for i, r in enumerate(a[:3])])
    assert not passed["every record of A is in B"]


def _tagged(n: int) -> bytes:
    return json.dumps({"src": f"shardId-000000000009 {n:03d} 0", "inc": 1, "eval": "5", "p": {"n": n}}).encode()


def _put_aggregate(client: Any, stream: str, explicit: str, users: list[tuple[str, bytes, str]]) -> None:
    aggregator = RecordAggregator()
    for key, data, hash_key in users:
        assert aggregator.add_user_record(key, data, hash_key) is None
    key, _, blob = aggregator.clear_and_get().get_contents()
    client.put_record(StreamName=stream, Data=blob, PartitionKey=key, ExplicitHashKey=explicit)


def test_the_reader_splits_aggregates_and_skips_a_misplaced_one(simulator_admin: Any) -> None:
    client = boto3_client(simulator_admin.endpoint)
    stream = f"soak-pipeline-{uuid.uuid4().hex[:8]}"
    client.create_stream(StreamName=stream, ShardCount=2)
    client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})
    upper = str(2**127 + 5)  # in the second shard's range
    _put_aggregate(client, stream, "1", [("k0", _tagged(0), "1"), ("k1", _tagged(1), "2")])
    _put_aggregate(client, stream, "3", [("k2", _tagged(2), "3"), ("k3", _tagged(3), upper)])  # k3 misplaced
    client.put_record(StreamName=stream, Data=_tagged(4), PartitionKey="k4", ExplicitHashKey=upper)

    tail = StreamTail(client, stream)
    tail.refresh()
    shards = [s for s, _ in sorted(tail.lineage())]
    copies = tail.copies(shards)
    assert sorted((c.partition_key, c.position[2]) for c in copies) == [("k0", 0), ("k1", 1), ("k4", 0)]
    assert [c.tag.payload["n"] for c in copies if c.tag] == [0, 1, 4]
    [skipped] = tail.misplaced
    assert [key for _, key, _ in skipped.records] == ["k2", "k3"]
    expected: set[Position] = {("shardId-000000000009", f"{n:03d}", 0) for n in (0, 1, 4)}
    assert tail.sources() == expected
    # What came later is read on the next refresh, from where the shard was left.
    client.put_record(StreamName=stream, Data=_tagged(5), PartitionKey="k5", ExplicitHashKey="7")
    tail.refresh()
    assert ("shardId-000000000009", "005", 0) in tail.sources() and len(tail.copies(shards)) == 4


def test_only_the_pipeline_modes_meet_slow_answers_and_the_reader_modes_plans_stay_as_they_were() -> None:
    assert P.SLOW_ANSWER in P.menu_for("full", "pipeline") and P.SLOW_ANSWER in P.menu_for("full", "pipeline-kpl")
    assert all(P.SLOW_ANSWER not in P.menu_for("full", mode) for mode in ("polling", "efo"))
    # make test's reader-mode plan (seed 121, docs/dev/soak.md): its driver kill stays at 12.8 s
    short = P.PlanSettings(60, "short", 3.0, 5.0, 0.6)
    assert [f.at for f in P.plan(121, "polling", short) if f.kind == P.DRIVER_KILL] == [12.8]
