"""Fixtures of the docs checks: a Kinesis simulator of their own and the example runner's sessions."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from docs.tools import examples


@pytest.fixture(scope="session")
def docs_simulator(simulator_launcher: Any) -> Iterator[str]:
    """A simulator for the examples alone (they delete and recreate every stream between files), quotas off:
    a snippet shows how to use the connector, not how it copes with throttling."""
    with tempfile.TemporaryDirectory(prefix="docs-examples-simulator-") as state_dir:
        endpoint = simulator_launcher.start(state_dir, "--quotas", "off")
        try:
            yield endpoint
        finally:
            simulator_launcher.stop(state_dir)


@pytest.fixture(scope="session")
def examples_runner(docs_simulator: str) -> Iterator[examples.Runner]:
    """The Python and Scala sessions, each started when a test first needs it and shared by every file."""
    with examples.runner(docs_simulator) as runner:
        yield runner
