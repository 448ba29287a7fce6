"""Both Kinesis servers the conformance suite runs against, each behind a plain boto3 client."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from kinesis_conformance import KINESIS_MOCK, SIMULATOR, Server, kinesis_client

if TYPE_CHECKING:  # the root conftest.py, which pytest loads itself
    from conftest import SimulatorLauncher

@pytest.fixture(scope="session")
def conformance_simulator_endpoint(simulator_launcher: SimulatorLauncher) -> Iterator[str]:
    """A simulator of its own with quotas off: conformance is about the API, not about rates."""
    with tempfile.TemporaryDirectory(prefix="kinesis-simulator-conformance-") as state_dir:
        endpoint = simulator_launcher.start(state_dir, "--quotas", "off")
        try:
            yield endpoint
        finally:
            simulator_launcher.stop(state_dir)


@pytest.fixture(params=[KINESIS_MOCK, SIMULATOR])
def server(request: pytest.FixtureRequest) -> Server:
    endpoint_fixture = "kinesis_endpoint" if request.param == KINESIS_MOCK else "conformance_simulator_endpoint"
    endpoint: str = request.getfixturevalue(endpoint_fixture)
    return Server(request.param, endpoint, kinesis_client(endpoint))


@pytest.fixture
def simulator_client(simulator_endpoint: str) -> Any:
    """boto3 on the session simulator (AWS quotas on unless a test changes them with `simulator_admin`)."""
    return kinesis_client(simulator_endpoint)
