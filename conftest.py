"""Fixtures shared by every Python test: a Kinesis endpoint and a SparkSession with the connector jar."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent
LAUNCHER = REPO / "localstack" / "kinesis-mock"


class KinesisMockLauncher:
    """Drives `localstack/kinesis-mock`, the one launcher every test and `make emulator-up` use."""

    def start(self, state_dir: str, *options: str) -> str:
        """Start kinesis-mock and return its endpoint URL once it is healthy."""
        out = subprocess.run(
            [str(LAUNCHER), "start", "--state-dir", state_dir, *options],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return out.stdout.strip().splitlines()[-1]

    def stop(self, state_dir: str) -> None:
        subprocess.run([str(LAUNCHER), "stop", "--state-dir", state_dir], check=True, timeout=60)


@pytest.fixture(scope="session")
def kinesis_mock_launcher() -> KinesisMockLauncher:
    return KinesisMockLauncher()


@pytest.fixture(scope="session")
def kinesis_endpoint() -> Iterator[str]:
    """KINESIS_ENDPOINT when set (LocalStack, real AWS); otherwise a kinesis-mock started for this session."""
    given = os.environ.get("KINESIS_ENDPOINT")
    if given:
        yield given
        return
    with launched(KinesisMockLauncher(), "kinesis-mock-") as endpoint:
        yield endpoint


@contextlib.contextmanager
def launched(launcher: KinesisMockLauncher | SimulatorLauncher, prefix: str, *options: str) -> Iterator[str]:
    """A server started by its launcher in a temporary state folder, stopped (and the folder removed) on exit."""
    with tempfile.TemporaryDirectory(prefix=prefix) as state_dir:
        endpoint = launcher.start(state_dir, *options)
        try:
            yield endpoint
        finally:
            launcher.stop(state_dir)


# --- Kinesis simulator (localstack/simulator) ------------------------------------------------------------------
SIMULATOR_LAUNCHER = REPO / "localstack" / "kinesis-simulator"


class SimulatorLauncher:
    """Drives `localstack/kinesis-simulator`, the launcher `make simulator-up` uses too."""

    def start(self, state_dir: str, *options: str) -> str:
        """Start the simulator (options as on its command line, e.g. "--quotas", "off") and return its endpoint."""
        out = subprocess.run(
            [str(SIMULATOR_LAUNCHER), "start", "--state-dir", state_dir, *options],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return out.stdout.strip().splitlines()[-1]

    def stop(self, state_dir: str) -> None:
        subprocess.run([str(SIMULATOR_LAUNCHER), "stop", "--state-dir", state_dir], check=True, timeout=60)


class SimulatorAdmin:
    """The simulator's admin API (`/_sim/...`): settings (quotas, expiry, retention), faults, counters."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint.rstrip("/")

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.endpoint}/_sim/{path}", data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            result: dict[str, Any] = json.loads(response.read())
            return result

    def settings(self, **changes: Any) -> dict[str, Any]:
        """Changes the given settings (quotas={...}, iteratorExpiryMillis=..., retentionMillis=...); returns all."""
        return self.call("PUT", "settings", changes) if changes else self.call("GET", "settings")

    def quotas(self, **changes: Any) -> dict[str, Any]:
        """E.g. quotas(enabled=True, factor=0.1, readCalls=False)."""
        return self.settings(quotas=changes)

    def faults(self, *rules: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
        """Replaces the fault rules, e.g. faults({"kind": "http500", "operations": ["GetRecords"]}, seed=7)."""
        return self.call("PUT", "faults", {"rules": list(rules), **({"seed": seed} if seed is not None else {})})

    def fault_state(self) -> dict[str, Any]:
        """The seed and the rules, each with how often it fired."""
        return self.call("GET", "faults")

    def clear_faults(self) -> dict[str, Any]:
        return self.call("DELETE", "faults")

    def counters(self) -> dict[str, Any]:
        return self.call("GET", "counters")

    def reset_counters(self) -> None:
        self.call("DELETE", "counters")

    def expire_iterators(self) -> None:
        self.call("POST", "iterators/expire")

    def delete_stream(self, name: str) -> None:
        self.call("POST", f"streams/{name}/delete")

    def reset(self) -> None:
        """Back to how a fresh simulator starts from the fixture: AWS quotas on, no faults, zero counters."""
        self.clear_faults()
        self.settings(
            quotas={
                "enabled": True,
                "factor": 1.0,
                "writeBytes": True,
                "writeRecords": True,
                "readCalls": True,
                "readBytes": True,
                "listShards": True,
                "describeStreamSummary": True,
                "getShardIterator": True,
                "consumersPerStream": 20,
            },
            iteratorExpiryMillis=300000,
            retentionMillis=None,
            consumerActivationMillis=500,
            subscriptionDurationMillis=300000,
            subscriptionHeartbeatMillis=5000,
        )
        self.reset_counters()


@pytest.fixture(scope="session")
def simulator_launcher() -> SimulatorLauncher:
    return SimulatorLauncher()


@pytest.fixture(scope="session")
def simulator_endpoint() -> Iterator[str]:
    """A Kinesis simulator started for this session (AWS quotas on); tests change it through `simulator_admin`."""
    with launched(SimulatorLauncher(), "kinesis-simulator-") as endpoint:
        yield endpoint


@pytest.fixture
def simulator_admin(simulator_endpoint: str) -> Iterator[SimulatorAdmin]:
    """The session simulator's admin API, reset before and after each test so no fault or quota leaks."""
    admin = SimulatorAdmin(simulator_endpoint)
    admin.reset()
    try:
        yield admin
    finally:
        admin.reset()


# --- end of Kinesis simulator ----------------------------------------------------------------------------------
