"""The README's install lines, typed as a new user types them: in a fresh `git clone` of HEAD, with `pip` a new venv's.

The lines are the shell lines between the README's `<!-- install:begin` and `<!-- install:end -->` markers, read from
the clone itself, so the first thing a user types cannot break again unnoticed. The build in the clone is a full one
(nothing of this checkout's target/ folders); the sbt launcher and dependency caches in the home folder are shared,
as they would be on a user's machine after a first build.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from release.tests.conftest import LINES, REPO

BEGIN = re.compile(r"<!--\s*install:begin\b")
END = re.compile(r"<!--\s*install:end\s*-->")


def install_lines(readme: str) -> list[str]:
    """The shell lines of the fenced blocks between the markers, comments dropped."""
    start = next(i for i, line in enumerate(readme.splitlines()) if BEGIN.search(line))
    end = next(i for i, line in enumerate(readme.splitlines()) if END.search(line) and i > start)
    lines: list[str] = []
    fenced = False
    for line in readme.splitlines()[start + 1 : end]:
        if line.startswith("```"):
            fenced = not fenced
            continue
        command = line.split(" #")[0].strip()
        if fenced and command and not command.startswith("#"):
            lines.append(command)
    return lines


def test_install_lines_are_found() -> None:
    lines = install_lines((REPO / "README.md").read_text())
    assert any(line.startswith("make ") for line in lines) and any("pip install" in line for line in lines), lines


def test_the_readme_install_works_verbatim_on_a_fresh_clone(tmp_path: Path) -> None:
    clone = tmp_path / "spark-kinesis"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SPARK_HOME", "MAKEFLAGS")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"  # `pip` and `python` are the new venv's
    env["VIRTUAL_ENV"] = str(venv)
    for line in install_lines((clone / "README.md").read_text()):
        run = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=1500)
        assert run.returncode == 0, f"'{line}' failed in a fresh clone:\n{(run.stdout + run.stderr)[-5000:]}"

    scalas = sorted(LINES)
    probe = (
        "import json, sys, pyspark_kinesis as p; "
        "print(json.dumps({'package': p.__file__, 'jars': {s: p.connector_jar(s) for s in sys.argv[1:]}}))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe, *scalas],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(out.stdout)
    site = str(next((venv / "lib").glob("python3*/site-packages")))
    assert found["package"].startswith(site), found  # installed, not the clone's folder
    for scala, jar in found["jars"].items():
        assert jar.startswith(site) and Path(jar).is_file(), (scala, jar)
