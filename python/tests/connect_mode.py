"""Builders made as on a Spark Connect session, for tests that compare the options Python computes with the JVM's."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def computing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Builders and strategies made inside compute their options as on a Spark Connect session."""
    with monkeypatch.context() as m:
        for module in ("pyspark_kinesis.builders", "pyspark_kinesis.retry"):
            m.setattr(f"{module}.connect_mode", lambda: True)
        yield
