"""The emulator launcher: loopback only, healthy when it says so, and gone when stopped."""

from __future__ import annotations

import os
import socket
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import boto3

if TYPE_CHECKING:  # the root conftest.py, which pytest loads itself
    from conftest import KinesisMockLauncher


def _listening_addresses(pid: int) -> set[tuple[str, int]]:
    """(address, port) of the TCP sockets a process listens on, read from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except FileNotFoundError:  # closed while we looked
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != "0A" or inode not in inodes:  # 0A = LISTEN
                continue
            addr_hex, port_hex = local.split(":")
            raw = bytes.fromhex(addr_hex)
            if family == socket.AF_INET:
                addr = socket.inet_ntop(family, raw[::-1])
            else:
                addr = socket.inet_ntop(family, b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4)))
            found.add((addr, int(port_hex, 16)))
    return found


def _running(pid: int) -> bool:
    """True while the process exists and is not a zombie (an exited child not yet reaped)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return not any(line.startswith("State:") and "Z" in line.split()[1] for line in status.splitlines())


def test_kinesis_mock_listens_on_loopback_only_and_stops_cleanly(
    tmp_path: Path, kinesis_mock_launcher: KinesisMockLauncher
) -> None:
    endpoint = kinesis_mock_launcher.start(str(tmp_path))
    pid = int((tmp_path / "pid").read_text())
    try:
        with urllib.request.urlopen(f"{endpoint}/healthcheck", timeout=5) as response:
            assert response.status == 200
        listening = _listening_addresses(pid)
        assert listening, "the emulator listens on nothing"
        assert {addr for addr, _ in listening} == {"127.0.0.1"}, listening
        assert urlparse(endpoint).port in {port for _, port in listening}

        client = boto3.client(
            "kinesis",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        client.create_stream(StreamName="launcher-check", ShardCount=2)
        client.get_waiter("stream_exists").wait(StreamName="launcher-check", WaiterConfig={"Delay": 0.2})
        assert len(client.list_shards(StreamName="launcher-check")["Shards"]) == 2
    finally:
        kinesis_mock_launcher.stop(str(tmp_path))
    assert not _running(pid), "the emulator process outlived 'stop'"
    assert not (tmp_path / "pid").exists()
