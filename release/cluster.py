"""A Spark standalone cluster on 127.0.0.1, started from a PySpark install as a user without Spark's sbin/ would:
`bin/spark-class org.apache.spark.deploy.master.Master`, then Workers registering with it; stopped by their pids."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True)
class Cluster:
    master_url: str
    ui_url: str
    work_dirs: list[Path]

    def alive_workers(self) -> int:
        with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=5) as response:
            state = json.loads(response.read())
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


def spark_env(spark_home: Path, python: Path) -> dict[str, str]:
    """The environment a cluster process and spark-submit get: this Spark, this Python, loopback only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_", "PYTHON"))}
    env.update(
        SPARK_HOME=str(spark_home),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=str(python),
        PYSPARK_DRIVER_PYTHON=str(python),
        PATH=f"{python.parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


@contextlib.contextmanager
def standalone(spark_home: Path, python: Path, work: Path, workers: int = 2, timeout: float = 120) -> Iterator[Cluster]:
    """A master and `workers` workers of one core and 1 GiB each; their logs are under `work`."""
    work.mkdir(parents=True, exist_ok=True)
    env = spark_env(spark_home, python)
    spark_class = str(spark_home / "bin" / "spark-class")
    port, ui_port = free_port(), free_port()
    processes: list[subprocess.Popen[bytes]] = []

    def start(name: str, *args: str) -> None:
        log = open(work / f"{name}.log", "wb")  # noqa: SIM115 - closed when the process ends
        processes.append(subprocess.Popen([spark_class, *args], env=env, stdout=log, stderr=subprocess.STDOUT))

    master = "org.apache.spark.deploy.master.Master"
    worker = "org.apache.spark.deploy.worker.Worker"
    cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}", [])
    try:
        start("master", master, "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port))
        for i in range(workers):
            work_dir = work / f"worker-{i}"
            cluster.work_dirs.append(work_dir)
            start(f"worker-{i}", worker, "--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port",
                  str(free_port()), "--work-dir", str(work_dir), cluster.master_url)  # fmt: skip
        deadline = time.monotonic() + timeout
        while True:
            dead = [p.args for p in processes if p.poll() is not None]
            if dead:
                raise RuntimeError(f"a cluster process ended at start: {dead}; logs in {work}")
            with contextlib.suppress(OSError, ValueError):
                if cluster.alive_workers() == workers:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{workers} workers did not register with {cluster.master_url} in {timeout} s")
            time.sleep(0.5)
        yield cluster
    finally:
        for p in reversed(processes):
            p.terminate()
        for p in processes:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
