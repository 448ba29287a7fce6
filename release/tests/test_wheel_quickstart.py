"""The wheel from dist/python in a brand-new venv, then the README's PySpark quickstart as a user types it.

The venv gets the wheel and PySpark from the package index (pip's cache), the job runs from a folder outside the
checkout with nothing of it on any path, and `configure_spark` must pick the jar inside the installed wheel. The
blocks are the README's own (its Install section's Python block, then the PySpark quickstart), so the page cannot
drift from what works; the SDK reaches a simulator through `AWS_ENDPOINT_URL_KINESIS`, as in docs/tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from docs.tools.examples import CLICKS, Block, clear_checkpoints, load, reset_streams, sdk_environment
from release.streams import stored
from release.tests.conftest import REPO

PYSPARK = "4.3.0"
EPILOGUE = """
import json as _json, pyspark_kinesis as _pk
print("RESULT " + _json.dumps({"jar": _pk.connector_jar(), "spark_jars": spark.conf.get("spark.jars"),
                               "package": _pk.__file__, "version": _pk.__version__, "spark": spark.version}))
"""


def readme_blocks() -> list[Block]:
    """The Install section's Python block and the PySpark quickstart's, in page order."""
    text = (REPO / "README.md").read_text().splitlines()
    heading = {line: number for number, line in enumerate(text, start=1) if line.startswith("## ")}
    sections = [(heading["## Install"], heading["## Quickstart: PySpark"]), (heading["## Quickstart: PySpark"], None)]
    python = [b for b in load(REPO / "README.md").blocks if b.language == "python"]
    picked = [next(b for b in python if start < b.line and (end is None or b.line < end)) for start, end in sections]
    assert all(b.not_run is None for b in picked), "the README's quickstart is marked not run"
    return picked


def test_the_readme_quickstart_runs_on_the_wheel_in_a_new_venv(
    wheel: Path, version: str, tmp_path: Path, simulator_launcher: Any
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, str(wheel), f"pyspark=={PYSPARK}"], check=True, timeout=600)
    site = next((venv / "lib").glob("python3*/site-packages"))

    blocks = readme_blocks()
    script = tmp_path / "job" / "quickstart.py"
    script.parent.mkdir()
    script.write_text("".join(b.code for b in blocks) + EPILOGUE)
    clear_checkpoints(blocks)  # /tmp/checkpoints/... of an earlier run would resume offsets of recreated streams
    # A simulator of its own: the README's stream names are fixed, and reset_streams deletes every other stream.
    with tempfile.TemporaryDirectory(prefix="kinesis-simulator-quickstart-") as state:
        endpoint = simulator_launcher.start(state)
        try:
            reset_streams(endpoint)  # `clicks` holds the docs' click events; `copy` is empty
            env = sdk_environment(endpoint)
            env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
            env.update(PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=str(python))
            run = subprocess.run(
                [str(python), str(script)], cwd=script.parent, env=env, capture_output=True, text=True, timeout=600
            )
            assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
            copied = [r["data"] for r in stored(endpoint, "copy")]
        finally:
            simulator_launcher.stop(state)
    result = json.loads(next(x for x in reversed(run.stdout.splitlines()) if x.startswith("RESULT "))[7:])
    jar = f"{site}/pyspark_kinesis/jars/spark-kinesis-assembly_2.13-{version}.jar"
    assert result["jar"] == jar and result["spark_jars"] == jar, result
    assert result["package"].startswith(str(site)), result
    assert result["spark"] == PYSPARK
    checkouts = [c for c in CLICKS if c["page"] == "/checkout"]
    assert checkouts, "the docs' click events hold no /checkout click: the quickstart would prove nothing"
    assert Counter(json.dumps(json.loads(r), sort_keys=True) for r in copied) == Counter(
        json.dumps(c, sort_keys=True) for c in checkouts
    )
