"""The simulator's launcher: loopback only, healthy when it says so, its options applied, and gone when stopped."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from test_kinesis_mock_launcher import _listening_addresses, _running

if TYPE_CHECKING:  # the root conftest.py, which pytest loads itself
    from conftest import SimulatorLauncher


def test_simulator_listens_on_loopback_only_and_stops_cleanly(
    tmp_path: Path, simulator_launcher: SimulatorLauncher
) -> None:
    endpoint = simulator_launcher.start(str(tmp_path), "--quotas", "off", "--iterator-expiry-ms", "1234")
    pid = int((tmp_path / "pid").read_text())
    try:
        with urllib.request.urlopen(f"{endpoint}/_sim/settings", timeout=5) as response:
            settings = json.loads(response.read())
        assert settings["quotas"]["enabled"] is False
        assert settings["iteratorExpiryMillis"] == 1234
        listening = _listening_addresses(pid)
        assert listening, "the simulator listens on nothing"
        assert {addr for addr, _ in listening} == {"127.0.0.1"}, listening
        assert urlparse(endpoint).port in {port for _, port in listening}
    finally:
        simulator_launcher.stop(str(tmp_path))
    assert not _running(pid), "the simulator process outlived 'stop'"
    assert not (tmp_path / "pid").exists()
