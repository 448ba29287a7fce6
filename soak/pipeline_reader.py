"""The pipeline modes' independent reader of stream B (what the connector's sink wrote): boto3 GetRecords over every
shard, closed ones too, de-aggregating KPL aggregates with PyPI's `aws-kinesis-agg`, nothing of the connector's.

Read incrementally (`refresh`): each shard keeps its iterator and last sequence number between refreshes, so the run
can poll B while it waits for the query to catch up; an expired iterator is renewed from the last record read
(`bench.env.get_records_renewing`), and a shard is done once it is closed and read to its null next iterator.

An aggregate holding a user record whose hash key (its explicit hash key, else the MD5 of its partition key) lies
outside the range of the shard that stores it is skipped whole, as the KCL does: a split of B finished while the
aggregate was on its way, and the sink sends all of its user records again, packed for their own shards
(docs/writing.md, "Resharding"). The skipped ones are kept, so the checks can name them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aws_kinesis_agg.deaggregator import iter_deaggregate_records  # type: ignore[import-untyped]

from bench.env import get_records_renewing
from soak.reader import described_shards, shard_info
from soak.sink import Payload, Position


@dataclass(frozen=True)
class Tag:
    """What the pipeline query put around A's data (soak/driver_job.py): where the row came from, who wrote it."""

    src: Position
    incarnation: int
    #: the executor's System.nanoTime when the row was computed: another value for each computation of the row
    evaluation: str
    #: A's data, as the JSON text the producer wrote, parsed
    payload: dict[str, Any]

    @staticmethod
    def parse(data: bytes) -> Tag | None:
        try:
            value = json.loads(data)
            shard, seq, sub = str(value["src"]).split(" ")
            return Tag((shard, seq, int(sub)), int(value["inc"]), str(value["eval"]), dict(value["p"]))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class Copy:
    """One user record B holds: its position in B, its partition key, the tag (None when not the query's)."""

    position: Position
    partition_key: str
    tag: Tag | None

    @property
    def payload(self) -> Payload:
        return Payload.of(self.tag.payload if self.tag else {})


@dataclass(frozen=True)
class Misplaced:
    """An aggregate skipped because a user record in it belongs to another shard."""

    shard: str
    sequence_number: str
    #: every user record it held, (hash key, partition key, tag)
    records: tuple[tuple[int, str, Tag | None], ...]


@dataclass
class _Shard:
    id: str
    parents: tuple[str, ...]
    low: int
    high: int
    closed: bool = False
    iterator: str | None = None
    last: str | None = None
    done: bool = False
    copies: list[Copy] = field(default_factory=list)


def hash_key(partition_key: str, explicit: str | None) -> int:
    """Where Kinesis places a record: its explicit hash key, else the MD5 of its partition key as a 128-bit number."""
    return int(explicit) if explicit is not None else int(hashlib.md5(partition_key.encode()).hexdigest(), 16)


def user_records(record: dict[str, Any]) -> tuple[bool, list[tuple[int, str, str | None, bytes]]]:
    """A boto3 record's user records, by aws-kinesis-agg: (aggregated, [(sub-sequence number, partition key,
    explicit hash key, data)]). A plain record is one user record (GetRecords does not return its explicit hash
    key, and Kinesis placed it, so none is needed)."""
    out: list[tuple[int, str, str | None, bytes]] = []
    aggregated = False
    for user in iter_deaggregate_records([record], data_format="Boto3"):
        k = user["kinesis"]
        if k.get("aggregated"):
            aggregated = True
            data = base64.b64decode(k["data"])
            out.append((int(k["subSequenceNumber"]), k["partitionKey"], k.get("explicitHashKey"), data))
        else:
            out.append((0, k["partitionKey"], None, k["data"]))
    return aggregated, out


def placed_user_records(record: dict[str, Any], shard: str, low: int, high: int) -> tuple[list[Copy], Misplaced | None]:
    """The user records of one stored record, or none and the misplaced aggregate (the KCL's rule)."""
    aggregated, users = user_records(record)
    seq = record["SequenceNumber"]
    keyed = [(hash_key(key, explicit), key, sub, data) for sub, key, explicit, data in users]
    if aggregated and any(not low <= h <= high for h, _, _, _ in keyed):
        return [], Misplaced(shard, seq, tuple((h, key, Tag.parse(data)) for h, key, _, data in keyed))
    return [Copy((shard, seq, sub), key, Tag.parse(data)) for _, key, sub, data in keyed], None


class StreamTail:
    """Stream B read so far, every shard from TRIM_HORIZON; `refresh` reads what was added since."""

    def __init__(self, client: Any, stream: str) -> None:
        self.client, self.stream = client, stream
        self._shards: dict[str, _Shard] = {}
        self.misplaced: list[Misplaced] = []

    def refresh(self) -> None:
        for s in described_shards(self.client, self.stream):
            shard = self._shards.setdefault(s["ShardId"], self._new(s))
            shard.closed = "EndingSequenceNumber" in s["SequenceNumberRange"]
        for shard in self._shards.values():
            if not shard.done:
                self._read(shard)

    @staticmethod
    def _new(s: dict[str, Any]) -> _Shard:
        r = s["HashKeyRange"]
        return _Shard(s["ShardId"], shard_info(s).parents, int(r["StartingHashKey"]), int(r["EndingHashKey"]))

    def _read(self, shard: _Shard) -> None:
        """From where the shard was left to its tip (an empty answer 0 ms behind), or to its end when closed."""
        if shard.iterator is None:
            where = (
                {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "StartingSequenceNumber": shard.last}
                if shard.last
                else {"ShardIteratorType": "TRIM_HORIZON"}
            )
            shard.iterator = self.client.get_shard_iterator(StreamName=self.stream, ShardId=shard.id, **where)[
                "ShardIterator"
            ]
        empty = 0
        while shard.iterator:
            answer, _ = get_records_renewing(self.client, self.stream, shard.id, shard.iterator, shard.last)
            for r in answer["Records"]:
                copies, misplaced = placed_user_records(r, shard.id, shard.low, shard.high)
                shard.copies.extend(copies)
                if misplaced is not None:
                    self.misplaced.append(misplaced)
                shard.last = r["SequenceNumber"]
            shard.iterator = answer.get("NextShardIterator")
            empty = 0 if answer["Records"] else empty + 1
            if not shard.closed and empty and answer.get("MillisBehindLatest", 0) == 0:
                return  # at the tip; the next refresh goes on from here
            if empty > 100:
                raise RuntimeError(f"shard {shard.id} of {self.stream}: 100 empty answers and no end")
            time.sleep(0.2)  # 5 GetRecords a second per shard, the quota
        shard.done = True

    def lineage(self) -> list[tuple[str, tuple[str, ...]]]:
        return [(s.id, s.parents) for s in self._shards.values()]

    def copies(self, order: list[str]) -> list[Copy]:
        """Every user record read, shards in the given order, each in its order of sequence numbers."""
        return [c for shard in order if shard in self._shards for c in self._shards[shard].copies]

    def sources(self) -> set[Position]:
        """The A positions B holds a copy of (skipped aggregates not counted)."""
        return {c.tag.src for s in self._shards.values() for c in s.copies if c.tag is not None}

    def shard_counts(self) -> tuple[int, int]:
        """(closed, all) shards seen."""
        return sum(1 for s in self._shards.values() if s.closed), len(self._shards)
