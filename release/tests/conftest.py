"""What the release checks share: the artifacts `make dist` wrote, read as a user gets them."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "dist"
GROUP_PATH = "io/github/sparkkinesis"
#: Scala binary version -> the PySpark line its jar serves (docs/compatibility.md).
LINES = {"2.13": "4", "2.12": "3.5"}


def maven_version() -> str:
    """The version `make dist` published: the one folder under each artifact (a release or version.sbt's)."""
    folders = sorted(p.name for p in (DIST / "maven" / GROUP_PATH / "spark-kinesis_2.13").iterdir() if p.is_dir())
    assert len(folders) == 1, f"dist/maven holds {folders}: run 'make dist' once, from a clean dist/"
    return folders[0]


@pytest.fixture(scope="session")
def version() -> str:
    return maven_version()


@pytest.fixture(scope="session")
def wheel() -> Path:
    wheels = sorted((DIST / "python").glob("pyspark_kinesis-*-py3-none-any.whl"))
    assert len(wheels) == 1, f"dist/python holds {wheels}: run 'make dist'"
    return wheels[0]


@pytest.fixture(scope="session")
def maven_repo() -> Path:
    return DIST / "maven"
