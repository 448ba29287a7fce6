"""The connector's option table, read from ``_options.json``.

That file is generated from the Scala table ``KinesisOptions.all`` (``make python-options``; a Scala test fails when
the committed file drifts from it). On a Spark Connect session the builders compute their option maps from it,
without a JVM in this process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal, cast

Scope = Literal["source", "sink", "both"]


@dataclass(frozen=True)
class KinesisOption:
    """One option of the connector: its key (matched case-insensitively), the default as docs/configuration.md shows
    it, the side that reads it, whether its value is a secret, and what it means."""

    key: str
    default: str | None
    scope: Scope
    secret: bool
    doc: str


@lru_cache(maxsize=1)
def all_options() -> tuple[KinesisOption, ...]:
    """Every option, in the Scala table's order."""
    text = resources.files(__package__).joinpath("_options.json").read_text(encoding="utf-8")
    rows = json.loads(text)["options"]
    return tuple(
        KinesisOption(
            key=str(r["key"]),
            default=None if r["default"] is None else str(r["default"]),
            scope=cast(Scope, r["scope"]),
            secret=bool(r["secret"]),
            doc=str(r["doc"]),
        )
        for r in rows
    )


@lru_cache(maxsize=1)
def _by_lower_key() -> dict[str, KinesisOption]:
    return {o.key.lower(): o for o in all_options()}


def find(key: str) -> KinesisOption | None:
    """The option named ``key``, in any case; None for a key the table does not have."""
    return _by_lower_key().get(key.lower())


def key(name: str) -> str:
    """The table's spelling of the option ``name``; a name missing from the table is a bug of this package."""
    option = find(name)
    if option is None:
        raise RuntimeError(
            f"option '{name}' is not in pyspark_kinesis's options table: the package and the connector disagree; "
            "reinstall pyspark-kinesis (or run 'make python-options' in a source checkout)"
        )
    return option.key


def redact(settings: dict[str, str]) -> dict[str, str]:
    """``settings`` with every secret value replaced by ``***``, for printing."""
    return {k: "***" if (o := find(k)) is not None and o.secret else v for k, v in settings.items()}
