"""Virtual environments holding one PySpark release each, for checks of the wheel against every Spark line.

A venv is kept under ``$SPARK_KINESIS_CACHE/venvs/pyspark-<version>`` (default ``~/.cache/spark-kinesis``) and reused
by later runs: PySpark is a few hundred MB, and the checks only change what is installed beside it (the wheel).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: Written last, once PySpark is installed: a venv without it is an interrupted install, made again from scratch.
MARKER = ".pyspark-installed"


def cache_dir() -> Path:
    """Where the venvs live: ``$SPARK_KINESIS_CACHE``, default ``~/.cache/spark-kinesis`` (the Makefile's CACHE)."""
    return Path(os.environ.get("SPARK_KINESIS_CACHE") or Path.home() / ".cache" / "spark-kinesis")


def venv_python(venv: Path) -> Path:
    """The venv's interpreter."""
    return venv / "bin" / "python"


def pyspark_venv(version: str) -> Path:
    """A venv with ``pyspark==<version>`` and nothing else of ours, made on first use and reused after.

    :param version: an exact PySpark release, e.g. ``"4.0.5"``.
    :return: the venv's folder; its interpreter is :func:`venv_python`.
    :raises subprocess.CalledProcessError: venv creation or pip failed (e.g. no such release on PyPI).
    """
    venv = cache_dir() / "venvs" / f"pyspark-{version}"
    marker = venv / MARKER
    if marker.is_file() and marker.read_text().strip() == version and venv_python(venv).exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv_python(venv)), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, f"pyspark=={version}"], check=True)
    marker.write_text(version + "\n")
    return venv


def install_wheel(venv: Path, wheel: Path) -> None:
    """Install a pyspark-kinesis wheel into a venv, replacing any earlier one; PySpark is left as it is.

    :param venv: a venv from :func:`pyspark_venv`.
    :param wheel: the ``pyspark_kinesis-*.whl`` file.
    :raises subprocess.CalledProcessError: pip failed.
    """
    subprocess.run(
        [
            str(venv_python(venv)),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--force-reinstall",
            "--no-deps",
            str(wheel),
        ],
        check=True,
    )
