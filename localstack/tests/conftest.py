"""Both Kinesis servers the conformance suite runs against, each behind a plain boto3 client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from kinesis_conformance import KINESIS_MOCK, SIMULATOR, Server, kinesis_client

if TYPE_CHECKING:  # the root conftest.py, which pytest loads itself
    from conftest import SimulatorAdmin


@pytest.fixture(params=[KINESIS_MOCK, SIMULATOR])
def server(request: pytest.FixtureRequest) -> Server:
    if request.param == KINESIS_MOCK:
        endpoint: str = request.getfixturevalue("kinesis_endpoint")
    else:
        # Conformance is about the API, not about rates: the session simulator runs with its quotas off here
        # (simulator_admin puts them back after the test).
        admin: SimulatorAdmin = request.getfixturevalue("simulator_admin")
        admin.quotas(enabled=False)
        endpoint = admin.endpoint
    return Server(request.param, endpoint, kinesis_client(endpoint))


@pytest.fixture
def simulator_client(simulator_endpoint: str) -> Any:
    """boto3 on the session simulator (AWS quotas on unless a test changes them with `simulator_admin`)."""
    return kinesis_client(simulator_endpoint)
