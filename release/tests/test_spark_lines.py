"""Every Spark line the docs claim (docs/compatibility.md), on the newest PySpark of each: the pyspark-kinesis wheel
installed into a venv holding only that PySpark, a streaming write and a streaming read through it
(release/jobs/round_trip.py) against the Kinesis simulator, checked against what boto3 reads from the stream.

Run by `make dist-check` (part of `make test`, after `make dist` and `make simulator-jar`). The venvs are made
once under $SPARK_KINESIS_CACHE/venvs (release/venvs.py) and reused; the first run downloads each PySpark.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from release.streams import new_stream, stored
from release.venvs import install_wheel, pyspark_venv, venv_python

REPO = Path(__file__).resolve().parents[2]
JOB = REPO / "release" / "jobs" / "round_trip.py"

#: The newest PySpark of every line docs/compatibility.md claims, and the Scala binary version of its connector jar.
SPARK_LINES: dict[str, str] = {
    "3.5.9": "2.12",
    "4.0.5": "2.13",
    "4.1.4": "2.13",
    "4.2.1": "2.13",
    "4.3.0": "2.13",
}
RECORDS = 60
SHARDS = 2
#: One local[2] session writing and reading a few dozen records takes well under a minute; this bounds a hang.
JOB_TIMEOUT_S = 240


def _jars_in(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return sorted(
            Path(n).name for n in z.namelist() if n.startswith("pyspark_kinesis/jars/") and n.endswith(".jar")
        )


@pytest.fixture(scope="session")
def wheel() -> Iterator[Path]:
    """`make dist`'s wheel when there is one, else one built now from python/ (with the jars `make python-jar` put
    there). Built from a copy: setuptools would reuse python/build, where a stale jar may lie."""
    built = sorted((REPO / "dist" / "python").glob("pyspark_kinesis-*.whl"))
    if len(built) > 1:
        pytest.fail(f"several wheels in dist/python, keep one: {[w.name for w in built]}")
    if built:
        yield built[0]
        return
    jars = REPO / "python" / "pyspark_kinesis" / "jars"
    for scala in sorted(set(SPARK_LINES.values())):
        if not list(jars.glob(f"spark-kinesis-assembly_{scala}-*.jar")):
            pytest.fail(f"no Scala {scala} connector jar in {jars}: run 'make build python-jar'")
    with tempfile.TemporaryDirectory(prefix="spark-lines-wheel-") as tmp:
        source = Path(tmp) / "python"
        shutil.copytree(
            REPO / "python", source, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__")
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "--wheel-dir",
                tmp,
                str(source),
            ],
            check=True,
        )
        [made] = Path(tmp).glob("pyspark_kinesis-*.whl")
        yield made


def _job_env(venv: Path) -> dict[str, str]:
    """The caller's environment without anything pointing into the checkout, its venv or another Spark."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "SPARK_HOME", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYTHONHOME")
    }
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *[p for p in env.get("PATH", "").split(os.pathsep) if p]])
    env["PYSPARK_PYTHON"] = str(venv_python(venv))
    return env


def _sorted(records: list[dict[str, str]]) -> list[dict[str, str]]:
    return sorted(records, key=lambda r: (r["shardId"], int(r["sequenceNumber"])))


@pytest.mark.parametrize("version", list(SPARK_LINES))
def test_a_streaming_write_and_read_round_trip_through_the_wheel(
    version: str, wheel: Path, simulator_endpoint: str, tmp_path: Path
) -> None:
    scala = SPARK_LINES[version]
    assert f"spark-kinesis-assembly_{scala}" in " ".join(_jars_in(wheel)), f"the wheel lacks the Scala {scala} jar"
    venv = pyspark_venv(version)
    install_wheel(venv, wheel)

    stream = new_stream(simulator_endpoint, f"lines-{version.replace('.', '-')}", SHARDS)

    # Outside the checkout, and the job copied there too: its folder lands on sys.path.
    work = tmp_path / "work"
    work.mkdir()
    job = tmp_path / JOB.name
    shutil.copy(JOB, job)
    out = subprocess.run(
        [str(venv_python(venv)), str(job), simulator_endpoint, stream, str(work), str(RECORDS)],
        cwd=tmp_path,
        env=_job_env(venv),
        capture_output=True,
        text=True,
        timeout=JOB_TIMEOUT_S,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    assert out.returncode == 0 and len(lines) == 1, f"PySpark {version}: exit {out.returncode}\n{out.stderr[-6000:]}"
    result = json.loads(lines[0][len("RESULT ") :])

    assert result["spark"] == version
    written = {(f"key-{i}", f"record-{i}") for i in range(RECORDS)}
    read = result["records"]
    assert len(read) == RECORDS
    assert {(r["partitionKey"], r["data"]) for r in read} == written
    assert _sorted(read) == _sorted(stored(simulator_endpoint, stream))

    site_jars = sorted(
        venv.glob(f"lib/python*/site-packages/pyspark_kinesis/jars/spark-kinesis-assembly_{scala}-*.jar")
    )
    assert len(site_jars) == 1, site_jars
    assert Path(result["provider_jar"]).resolve() == site_jars[0].resolve()
