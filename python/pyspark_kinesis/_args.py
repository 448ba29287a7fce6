"""The builders' argument types, and the checks and conversions every argument goes through in Python.

Arguments are checked and converted here, before py4j or the options map: a wrong type or a malformed value fails
at once with a message naming the argument, and both sessions (classic: the JVM builder; Spark Connect: the
computed options) receive the same converted value. Ranges that depend on the connector (``maxRecordsPerFetch`` in
1..10000, ...) are left to it: it checks every option when ``build`` is called, with the same message as
``spark.readStream.option(...)``.

Durations and sizes follow Spark's own syntax (``JavaUtils.timeStringAsMs`` / ``byteStringAsBytes``), which the
connector parses with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Literal, get_args

#: A duration: Spark's syntax as a string (``"200ms"``, ``"10s"``, ``"1min"``), an ``int`` of milliseconds, or a
#: ``datetime.timedelta`` (whole milliseconds).
DurationLike = str | int | timedelta
#: A size in bytes: an ``int``, or Spark's syntax as a string (``"512k"``, ``"10m"``, ``"1g"``: binary units).
SizeLike = int | str
#: The named start positions of :meth:`KinesisSourceBuilder.withInitialPosition`.
InitialPosition = Literal["latest", "trim_horizon", "earliest", "at_timestamp"]
#: The sink's flow control modes, for :meth:`KinesisSinkBuilder.withFlowControl`.
FlowControl = Literal["adaptive", "ladder", "aimd", "off"]

INITIAL_POSITIONS: tuple[str, ...] = get_args(InitialPosition)
FLOW_CONTROLS: tuple[str, ...] = get_args(FlowControl)

INT_MAX = 2**31 - 1  # a JVM Int: larger values would not reach the JVM builder's Int parameters through py4j
LONG_MAX = 2**63 - 1  # a JVM Long

# Spark's suffixes (JavaUtils.timeSuffixes, JavaUtils.byteSuffixes), in the unit each stands for.
_MICROS_PER = {
    "us": 1,
    "ms": 1_000,
    "s": 1_000_000,
    "m": 60_000_000,
    "min": 60_000_000,
    "h": 3_600_000_000,
    "d": 86_400_000_000,
}
_BYTES_PER = {
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "p": 1 << 50,
    "pb": 1 << 50,
}
_AMOUNT = re.compile(r"([0-9]+)([a-z]+)?")  # Spark's grammar for both, once lower-cased and trimmed
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def check_str(name: str, value: object) -> str:
    """``value``, a non-blank ``str``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def check_int(name: str, value: object, minimum: int = 1, maximum: int = LONG_MAX) -> int:
    """``value``, an ``int`` (not a ``bool``) in ``minimum..maximum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_bool(name: str, value: object) -> bool:
    """``value``, a ``bool`` (``"true"`` or ``1`` are refused: they are the options' spelling, not Python's)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


def check_number(name: str, value: object) -> float:
    """``value`` as a ``float``: an ``int`` or ``float``, not a ``bool``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` as the one of ``choices`` it names, in any case (the connector matches choices case-insensitively)."""
    text = check_str(name, value)
    for c in choices:
        if c == text.strip().lower():
            return c
    raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")


def _timedelta_millis(name: str, value: timedelta) -> int:
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    if micros < 0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    if micros % 1_000:
        raise ValueError(f"{name} must be whole milliseconds, got {value!r}")
    return micros // 1_000


def _duration_string_millis(name: str, value: str) -> int:
    match = _AMOUNT.fullmatch(value.strip().lower())
    if match is None or (match.group(2) or "ms") not in _MICROS_PER:
        raise ValueError(
            f"{name} must be a duration such as '200ms', '10s' or '1min' (suffixes us, ms, s, m, min, h, d), "
            f"an int of milliseconds or a datetime.timedelta, got {value!r}"
        )
    return int(match.group(1)) * _MICROS_PER[match.group(2) or "ms"] // 1_000


def duration(name: str, value: object) -> str:
    """A :data:`DurationLike` as the option's string: a string as given (once checked), else ``"<n>ms"``."""
    if isinstance(value, str):
        _duration_string_millis(name, check_str(name, value))
        return value
    return f"{duration_millis(name, value, minimum=0)}ms"


def duration_millis(name: str, value: object, minimum: int = 1, maximum: int = LONG_MAX) -> int:
    """A :data:`DurationLike` in whole milliseconds, in ``minimum..maximum``."""
    if isinstance(value, timedelta):
        millis = _timedelta_millis(name, value)
    elif isinstance(value, str):
        millis = _duration_string_millis(name, check_str(name, value))
    elif isinstance(value, int) and not isinstance(value, bool):
        millis = value
    else:
        raise TypeError(
            f"{name} must be a duration: a str such as '10s', an int of milliseconds or a datetime.timedelta, "
            f"got {type(value).__name__}"
        )
    if millis < minimum:
        raise ValueError(f"{name} must be at least {minimum} ms, got {value!r}")
    if millis > maximum:
        raise ValueError(f"{name} must be at most {maximum} ms, got {value!r}")
    return millis


def size_bytes(name: str, value: object, minimum: int = 1, maximum: int = LONG_MAX) -> int:
    """A :data:`SizeLike` in bytes, in ``minimum..maximum``."""
    if isinstance(value, str):
        match = _AMOUNT.fullmatch(check_str(name, value).strip().lower())
        if match is None or (match.group(2) or "b") not in _BYTES_PER:
            raise ValueError(
                f"{name} must be a size such as 1048576, '512k', '10m' or '1g' (binary units; suffixes b, k, kb, m, "
                f"mb, g, gb, t, tb, p, pb), got {value!r}"
            )
        size = int(match.group(1)) * _BYTES_PER[match.group(2) or "b"]
    elif isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        raise TypeError(f"{name} must be a size: an int of bytes or a str such as '10m', got {type(value).__name__}")
    if size < minimum:
        raise ValueError(f"{name} must be at least {minimum} bytes, got {value!r}")
    if size > maximum:
        raise ValueError(f"{name} must be at most {maximum} bytes, got {value!r}")
    return size


def size(name: str, value: object, minimum: int = 1) -> str:
    """A :data:`SizeLike` as the option's string: a string as given (once checked), an ``int`` as its digits."""
    size_bytes(name, value, minimum)
    return value if isinstance(value, str) else str(value)


def epoch_millis(name: str, value: object) -> int:
    """A timezone-aware ``datetime`` or an ``int`` of epoch milliseconds, as epoch milliseconds (sub-millisecond
    parts of a ``datetime`` dropped, as Kinesis' arrival times are milliseconds)."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"{name} must be timezone-aware, e.g. datetime(2025, 1, 31, 12, 0, tzinfo=timezone.utc): a naive "
                f"datetime is UTC to some APIs and local time to others, got {value!r}"
            )
        millis = (value - _EPOCH) // timedelta(milliseconds=1)
        if millis < 0:
            raise ValueError(f"{name} must not be before 1970-01-01T00:00:00Z, got {value.isoformat()}")
        return millis
    if isinstance(value, int) and not isinstance(value, bool):
        return check_int(name, value, minimum=0)
    raise TypeError(
        f"{name} must be a timezone-aware datetime or an int of epoch milliseconds, got {type(value).__name__}"
    )


def initial_position(name: str, value: object) -> str:
    """A start position as the ``initialPosition`` option's value: a named position, a JSON object as given, or a
    mapping (Databricks' ``{"at_timestamp": ..., "format": ...}``, per-shard positions) written as JSON."""
    if isinstance(value, Mapping):
        try:
            return json.dumps(dict(value))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} must be a mapping of JSON values: {e}") from None
    text = check_str(name, value)
    if text.lstrip().startswith("{"):
        return text
    try:
        return choice(name, text, INITIAL_POSITIONS)
    except ValueError:
        raise ValueError(
            f"{name} must be one of {', '.join(repr(c) for c in INITIAL_POSITIONS)}, a JSON object or a mapping "
            f"(Databricks' {{'at_timestamp': ..., 'format': ...}}, per-shard positions), got {value!r}"
        ) from None
