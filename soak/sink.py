"""Reading the idempotent sink the driver writes (soak/driver_job.py): one `batch-<id>.jsonl` per batch id.

Read incrementally (a file is parsed again only when it changed), because the run polls it every second while it
waits for the query to catch up. The sink's order is the batches' order, then the rows' order inside a batch (what
the batch's DataFrame gave: one Spark partition after another, each in the order the source produced).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: a position in a stream: (shardId, sequenceNumber, subSequenceNumber)
Position = tuple[str, str, int]


@dataclass(frozen=True)
class Payload:
    """What the producer put in a record's data; None fields when the data is not the producer's JSON."""

    id: str | None
    key: str | None
    n: int | None

    @staticmethod
    def parse(data: str) -> Payload:
        try:
            return Payload.of(json.loads(data))
        except ValueError:
            return Payload(None, None, None)

    @staticmethod
    def of(value: Any) -> Payload:
        """From the producer's JSON already parsed (the pipeline modes carry it inside their tag)."""
        try:
            return Payload(str(value["id"]), str(value["key"]), int(value["n"]))
        except (ValueError, KeyError, TypeError):
            return Payload(None, None, None)


@dataclass(frozen=True)
class SinkRow:
    batch: int
    index: int
    stream: str
    position: Position
    data: str
    payload: Payload


def parse_batch(batch: int, text: str) -> list[SinkRow]:
    rows = []
    for index, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        r = json.loads(line)
        rows.append(
            SinkRow(
                batch, index, r["stream"], (r["shardId"], r["seq"], int(r["sub"])), r["data"], Payload.parse(r["data"])
            )
        )
    return rows


class SinkReader:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._files: dict[int, tuple[tuple[int, int], list[SinkRow]]] = {}
        self._ids: Counter[str] = Counter()

    def refresh(self) -> None:
        if not self.folder.is_dir():
            return
        for path in self.folder.glob("batch-*.jsonl"):
            try:
                stat = path.stat()
                batch = int(path.stem.split("-", 1)[1])
            except (OSError, ValueError):
                continue
            version = (stat.st_mtime_ns, stat.st_size)
            known = self._files.get(batch)
            if known is not None and known[0] == version:
                continue
            try:
                rows = parse_batch(batch, path.read_text())
            except (OSError, ValueError):
                continue  # replaced under us: the next refresh reads the new file
            if known is not None:
                self._ids.subtract(r.payload.id for r in known[1] if r.payload.id is not None)
            self._ids.update(r.payload.id for r in rows if r.payload.id is not None)
            self._files[batch] = (version, rows)

    def ids(self) -> set[str]:
        return {i for i, count in self._ids.items() if count > 0}

    def positions(self) -> set[Position]:
        return {r.position for _, rows in self._files.values() for r in rows}

    def rows(self) -> list[SinkRow]:
        """Every row, in the sink's order."""
        return [r for batch in sorted(self._files) for r in self._files[batch][1]]

    def batches(self) -> int:
        return len(self._files)

    def replay_mismatches(self) -> list[Path]:
        return sorted(self.folder.glob("replay-mismatch-*.json")) if self.folder.is_dir() else []
