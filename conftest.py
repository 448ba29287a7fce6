"""Fixtures shared by every Python test: a Kinesis endpoint and a SparkSession with the connector jar."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent
LAUNCHER = REPO / "localstack" / "kinesis-mock"


class KinesisMockLauncher:
    """Drives `localstack/kinesis-mock`, the one launcher every test and `make emulator-up` use."""

    def start(self, state_dir: str) -> str:
        """Start kinesis-mock and return its endpoint URL once it is healthy."""
        out = subprocess.run(
            [str(LAUNCHER), "start", "--state-dir", state_dir], check=True, capture_output=True, text=True,
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
    launcher = KinesisMockLauncher()
    with tempfile.TemporaryDirectory(prefix="kinesis-mock-") as state_dir:
        endpoint = launcher.start(state_dir)
        try:
            yield endpoint
        finally:
            launcher.stop(state_dir)
