"""Where the soak finds what it runs on: the repository, the simulator (through the launcher and admin client the
tests use, from the root conftest.py), PySpark's own Spark distribution, the connector jar, boto3 clients."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]

# The launcher and admin client of the root conftest.py, loaded as the benchmarks load them.
from bench.env import SimulatorAdmin as SimulatorAdmin
from bench.env import SimulatorLauncher as SimulatorLauncher

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "soak" / "results"
SIMULATOR_JAR = REPO / "localstack" / "simulator" / "target" / "scala-2.13" / "kinesis-simulator.jar"
REGION = "us-east-1"
CREDENTIALS = {"awsAccessKey": "test", "awsSecretKey": "test"}


@contextlib.contextmanager
def simulator(state_dir: Path, jar: Path = SIMULATOR_JAR) -> Iterator[str]:
    """A simulator of the soak's own, AWS quotas on, its log kept in `state_dir` (evidence for a failed run)."""
    os.environ.setdefault("KINESIS_SIMULATOR_JAVA_OPTS", "-Xmx1g")
    launcher = SimulatorLauncher()
    state_dir.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("KINESIS_SIMULATOR_JAR")
    os.environ["KINESIS_SIMULATOR_JAR"] = str(jar)
    try:
        endpoint: str = launcher.start(str(state_dir))
    finally:
        if previous is None:
            del os.environ["KINESIS_SIMULATOR_JAR"]
        else:
            os.environ["KINESIS_SIMULATOR_JAR"] = previous
    try:
        yield endpoint
    finally:
        launcher.stop(str(state_dir))


def snapshot_jars(folder: Path) -> tuple[Path, Path]:
    """Copies of the simulator jar and the connector jar for one run: a build during a long run (sbt rewrites the
    simulator's assembly, `make python-jar` replaces the package's jar) cannot pull them away from under it."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in (SIMULATOR_JAR, Path(connector_jar())):
        if not source.is_file():
            raise FileNotFoundError(f"{source} is missing: run 'make build python-jar simulator-jar'")
        shutil.copy2(source, folder / source.name)
    return folder / SIMULATOR_JAR.name, folder / Path(connector_jar()).name


def spark_home() -> str:
    """PySpark's own distribution: local-cluster launches its executor JVMs from SPARK_HOME's jars."""
    import pyspark

    return os.path.dirname(pyspark.__file__)


def private_spark_home(folder: Path) -> str:
    """PySpark's distribution seen through a folder of symbolic links, for one run. local-cluster's workers put each
    application's executor folders, each with a copy of the connector jar (18 MiB), under `SPARK_HOME/work`, with
    no setting to move them (outside Spark's own tests): a soak starts dozens of drivers and executors, which
    would pile up gigabytes inside the virtualenv. With this SPARK_HOME they stay in the run's work folder."""
    home = folder / "spark-home"
    home.mkdir(parents=True, exist_ok=True)
    source = Path(spark_home())
    for entry in source.iterdir():
        link = home / entry.name
        if entry.name != "work" and not link.exists():
            link.symlink_to(entry)
    return str(home)


def connector_jar() -> str:
    """The jar `make python-jar` put in the Python package (the one a user of the wheel gets)."""
    # An editable install (a path hook) mypy cannot follow; with MYPYPATH=python it can.
    from pyspark_kinesis import connector_jar as bundled  # type: ignore[import-not-found, unused-ignore]

    return str(bundled())


def kinesis_client(endpoint: str, read_timeout: float = 10.0, retries: int = 10) -> Any:
    """boto3 against the simulator. `retries=1` turns botocore's own retries off (the producer retries itself, so
    every resend is one it knows about)."""
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(
            retries={"total_max_attempts": retries, "mode": "standard"},
            connect_timeout=3,
            read_timeout=read_timeout,
            max_pool_connections=4,
        ),
    )


def wait_for(condition: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    """Polls `condition` until it holds or `timeout` passes; says which."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
