"""The Python half of `make dist`: the pyspark-kinesis sdist and wheel, built from a staged copy of python/.

The stage holds real copies of what a checkout has as links or leaves out (LICENSE, NOTICE, both connector jars
with the list of what each bundles) and the release's version, so the checkout is never edited and a jar left in
python/ from another build cannot ship. The sdist is built first and the wheel from it (`python -m build`), so the
sdist is known to be complete; `twine check` then reads both as PyPI would.

Usage: ``python -m release.dist_python --version 0.1.0 --out dist/python JAR...``
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIST_IN_JAR = "META-INF/THIRD-PARTY.txt"


def python_version(maven_version: str) -> str:
    """The PEP 440 form of a Maven version: ``0.1.0-SNAPSHOT`` -> ``0.1.0.dev0``, ``0.2.0-RC1`` -> ``0.2.0rc1``."""
    if maven_version.endswith("-SNAPSHOT"):
        return maven_version[: -len("-SNAPSHOT")] + ".dev0"
    match = re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(?:RC|rc)(\d+))?", maven_version)
    if not match:
        raise ValueError(
            f"version {maven_version!r}: expected X.Y.Z, X.Y.Z-RCn or X.Y.Z-SNAPSHOT (semver, see docs/dev/releasing.md)"
        )
    return match.group(1) + (f"rc{match.group(2)}" if match.group(2) else "")


def scala_binary_version(jar: Path) -> str:
    match = re.fullmatch(r"spark-kinesis-assembly_(\d+\.\d+)-.*\.jar", jar.name)
    if not match:
        raise ValueError(f"{jar}: not a connector assembly (spark-kinesis-assembly_<scala>-<version>.jar)")
    return match.group(1)


def third_party_list(jar: Path) -> bytes:
    """The list the build wrote into the jar (project/ThirdParty.scala)."""
    with zipfile.ZipFile(jar) as archive:
        return archive.read(LIST_IN_JAR)


def put_jars(jars_dir: Path, jars: list[Path]) -> None:
    """The connector jars in the package's jars/ folder, each with its third-party list beside it."""
    for old in [*jars_dir.glob("*.jar"), *jars_dir.glob("THIRD-PARTY_*.txt")]:
        old.unlink()
    for jar in jars:
        shutil.copy2(jar, jars_dir / jar.name)
        (jars_dir / f"THIRD-PARTY_{scala_binary_version(jar)}.txt").write_bytes(third_party_list(jar))


def stage(version: str, jars: list[Path], stage_dir: Path) -> Path:
    shutil.rmtree(stage_dir, ignore_errors=True)
    shutil.copytree(
        REPO / "python",
        stage_dir,
        symlinks=False,  # LICENSE and NOTICE are links in the checkout: the stage holds their text
        ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", "tests", "tests-*", "*.jar"),
    )
    put_jars(stage_dir / "pyspark_kinesis" / "jars", jars)
    pyproject = stage_dir / "pyproject.toml"
    text, count = re.subn(r'(?m)^version = ".*"$', f'version = "{version}"', pyproject.read_text())
    if count != 1:
        raise RuntimeError(f"{pyproject}: no single 'version = ...' line to set")
    pyproject.write_text(text)
    return stage_dir


def build(stage_dir: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    # No isolation: the dev venv pins setuptools and wheel, and nothing is fetched at build time.
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(stage_dir)], check=True)
    built = sorted([*out.glob("*.whl"), *out.glob("*.tar.gz")])
    subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, built)], check=True)
    return built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="the release's Maven version (version.sbt or VERSION=)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--stage", type=Path, default=REPO / "target" / "dist-python")
    parser.add_argument("jars", type=Path, nargs=2, help="the 2.13 and 2.12 assemblies")
    args = parser.parse_args()
    for path in build(stage(python_version(args.version), args.jars, args.stage), args.out):
        print(path)


if __name__ == "__main__":
    main()
