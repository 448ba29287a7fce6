"""`spark-submit --packages` from dist/maven, as a user's cluster gets the connector.

An empty Ivy directory and a home without ~/.m2, so the artifact can only come from the repository `make dist`
wrote; the 2.13 jar on a standalone cluster (a master and two workers started from PySpark's own distribution),
the 2.12 jar on PySpark 3.5's local-cluster. The job reads a stream and writes it back through the sink, so both
the source's and the sink's tasks run in executor JVMs that fetched the jar from the driver.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from release.cluster import spark_env, standalone
from release.streams import kinesis_client, new_stream, stored
from release.tests.conftest import REPO
from release.venvs import pyspark_venv, venv_python

JOB = REPO / "release" / "jobs" / "pipeline_job.py"
#: The newest PySpark of each line whose jar is resolved here (the wheel's checks cover the other 4.x releases).
PYSPARK = {"2.13": "4.3.0", "2.12": "3.5.9"}


def submit(scala: str, master: str, version: str, endpoint: str, work: Path) -> tuple[dict[str, Any], str]:
    """Runs the pipeline job with --packages; returns its RESULT and spark-submit's log."""
    venv = pyspark_venv(PYSPARK[scala])
    python = venv_python(venv)
    spark_home = Path(
        subprocess.run(
            [str(python), "-c", "import os, pyspark; print(os.path.dirname(pyspark.__file__))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    source, sink = new_stream(endpoint, "release-source", 2), new_stream(endpoint, "release-sink", 2)
    client = kinesis_client(endpoint)
    written = [f"record-{i}" for i in range(200)]
    for start in range(0, len(written), 100):
        response = client.put_records(
            StreamName=source,
            Records=[{"PartitionKey": f"key-{i % 13}", "Data": written[i].encode()} for i in range(start, start + 100)],
        )
        assert response["FailedRecordCount"] == 0
    env = spark_env(spark_home, python)
    # The launcher JVM resolves --packages and also looks in ~/.m2: a home of its own leaves only dist/maven.
    (work / "home").mkdir(parents=True)
    env["SPARK_SUBMIT_OPTS"] = f"-Duser.home={work / 'home'}"
    run = subprocess.run(
        [
            str(spark_home / "bin" / "spark-submit"),
            "--master",
            master,
            "--packages",
            f"io.github.sparkkinesis:spark-kinesis_{scala}:{version}",
            "--repositories",
            (REPO / "dist" / "maven").as_uri(),
            "--conf",
            f"spark.jars.ivy={work / 'ivy'}",
            "--conf",
            "spark.executor.memory=768m",
            "--conf",
            "spark.ui.enabled=false",
            str(JOB),
            endpoint,
            source,
            sink,
            str(work),
        ],
        cwd=work,  # nothing of the checkout on any path: not the cwd, not PYTHONPATH (spark_env drops it)
        env=env,
        capture_output=True,
        text=True,
        timeout=480,
    )
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-6000:]
    result: dict[str, Any] = json.loads(
        next(x for x in reversed(run.stdout.splitlines()) if x.startswith("RESULT "))[7:]
    )
    # Every record read from the source was written, upper-cased, through the sink: checked outside the connector.
    assert Counter(r["data"] for r in stored(endpoint, sink)) == Counter(r.upper() for r in written)
    assert result["rows"] == len(written)
    assert result["spark"] == PYSPARK[scala]
    return result, log


def test_packages_from_dist_on_a_standalone_cluster(simulator_endpoint: str, version: str, tmp_path: Path) -> None:
    spark_home_venv = pyspark_venv(PYSPARK["2.13"])
    spark_home = Path(next((spark_home_venv / "lib").glob("python3*/site-packages/pyspark")))
    with standalone(spark_home, venv_python(spark_home_venv), tmp_path / "cluster", workers=2) as cluster:
        result, log = submit("2.13", cluster.master_url, version, simulator_endpoint, tmp_path / "job")
        # Resolved from dist/maven (Ivy's first --repositories entry), into the empty Ivy folder.
        assert f"found io.github.sparkkinesis#spark-kinesis_2.13;{version} in repo-1" in log, log[-4000:]
        jar = f"io.github.sparkkinesis_spark-kinesis_2.13-{version}.jar"
        assert result["provider_origin"].endswith(f"/jars/{jar}"), result
        # One executor per worker, each of which fetched the jar from the driver to run the tasks.
        assert len(result["executors"]) == 2, result
        for work_dir in cluster.work_dirs:
            fetched = list(work_dir.glob(f"app-*/*/{jar}"))
            assert fetched, f"no executor of {work_dir.name} fetched {jar}"


def test_packages_from_dist_for_spark_35(simulator_endpoint: str, version: str, tmp_path: Path) -> None:
    result, log = submit("2.12", "local-cluster[1,1,1024]", version, simulator_endpoint, tmp_path)
    assert f"found io.github.sparkkinesis#spark-kinesis_2.12;{version} in repo-1" in log, log[-4000:]
    assert result["provider_origin"].endswith(f"/jars/io.github.sparkkinesis_spark-kinesis_2.12-{version}.jar")
    assert result["executors"] and "driver" not in result["executors"], result


@pytest.fixture(autouse=True)
def _fresh_simulator(simulator_admin: Any) -> None:
    """Each job starts from a simulator without faults, at AWS quotas."""
