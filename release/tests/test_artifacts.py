"""The files `make dist` writes, checked as Maven Central, PyPI and a user's lawyer would read them."""

from __future__ import annotations

import hashlib
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from release.dist_python import python_version
from release.tests.conftest import GROUP_PATH, LINES, REPO

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
#: What Maven Central refuses a POM without (its publishing requirements).
POM_REQUIRED = [
    "m:name",
    "m:description",
    "m:url",
    "m:licenses/m:license/m:name",
    "m:licenses/m:license/m:url",
    "m:developers/m:developer/m:name",
    "m:scm/m:url",
    "m:scm/m:connection",
]


def artifact_dir(maven_repo: Path, scala: str, version: str) -> Path:
    return maven_repo / GROUP_PATH / f"spark-kinesis_{scala}" / version


def third_party(jar: zipfile.ZipFile) -> list[str]:
    """The coordinates the jar's META-INF/THIRD-PARTY.txt lists."""
    text = jar.read("META-INF/THIRD-PARTY.txt").decode()
    return [line.split("\t")[0] for line in text.splitlines() if line and not line.startswith("#")]


def test_the_version_is_version_sbt_s_unless_a_release_gave_one(version: str) -> None:
    sbt = next(line.split('"')[1] for line in (REPO / "version.sbt").read_text().splitlines() if "version :=" in line)
    assert version == sbt or not version.endswith("-SNAPSHOT"), (version, sbt)
    pyproject = (REPO / "python" / "pyproject.toml").read_text()
    assert f'version = "{python_version(sbt)}"' in pyproject, "python/pyproject.toml's version is not version.sbt's"


@pytest.mark.parametrize("scala", sorted(LINES))
def test_each_line_is_a_maven_repository_layout_with_sources_javadoc_and_checksums(
    maven_repo: Path, version: str, scala: str
) -> None:
    folder = artifact_dir(maven_repo, scala, version)
    base = f"spark-kinesis_{scala}-{version}"
    expected = [f"{base}.jar", f"{base}.pom", f"{base}-sources.jar", f"{base}-javadoc.jar"]
    for name in expected:
        data = (folder / name).read_bytes()
        assert (folder / f"{name}.sha1").read_text().split()[0] == hashlib.sha1(data).hexdigest(), name
        assert (folder / f"{name}.md5").read_text().split()[0] == hashlib.md5(data).hexdigest(), name
    with zipfile.ZipFile(folder / f"{base}-sources.jar") as sources:
        names = sources.namelist()
        assert "io/github/sparkkinesis/KinesisSources.scala" in names
        assert sources.read("META-INF/LICENSE") == (REPO / "LICENSE").read_bytes()
    with zipfile.ZipFile(folder / f"{base}-javadoc.jar") as javadoc:
        assert "index.html" in javadoc.namelist()
        assert javadoc.read("META-INF/LICENSE") == (REPO / "LICENSE").read_bytes()


@pytest.mark.parametrize("scala", sorted(LINES))
def test_the_pom_has_what_maven_central_requires_and_no_dependencies(
    maven_repo: Path, version: str, scala: str
) -> None:
    pom = ET.parse(artifact_dir(maven_repo, scala, version) / f"spark-kinesis_{scala}-{version}.pom").getroot()
    assert pom.findtext("m:groupId", namespaces=POM_NS) == "io.github.sparkkinesis"
    assert pom.findtext("m:artifactId", namespaces=POM_NS) == f"spark-kinesis_{scala}"
    assert pom.findtext("m:version", namespaces=POM_NS) == version
    missing = [path for path in POM_REQUIRED if not (pom.findtext(path, namespaces=POM_NS) or "").strip()]
    assert missing == []
    assert pom.findtext("m:licenses/m:license/m:name", namespaces=POM_NS) == "Apache-2.0"
    # The jar is shaded and self-contained: a dependency here would make --packages fetch (and clash with) it.
    assert pom.find("m:dependencies", POM_NS) is None


@pytest.mark.parametrize("scala", sorted(LINES))
def test_the_jar_carries_license_notice_and_the_list_of_what_it_bundles(
    maven_repo: Path, version: str, scala: str
) -> None:
    with zipfile.ZipFile(artifact_dir(maven_repo, scala, version) / f"spark-kinesis_{scala}-{version}.jar") as jar:
        assert jar.read("META-INF/LICENSE") == (REPO / "LICENSE").read_bytes()
        notice = jar.read("META-INF/NOTICE").decode()
        assert notice.startswith((REPO / "NOTICE").read_text().strip())
        assert "software.amazon.awssdk:sdk-core" in notice  # the AWS SDK's NOTICE, which Apache-2.0 §4(d) passes on
        listed = third_party(jar)
        for artifact in ("software.amazon.awssdk:kinesis:", "io.netty:netty-codec-http2:", "org.reactivestreams:"):
            assert any(c.startswith(artifact) for c in listed), artifact
        folders = {n.split("/")[2] for n in jar.namelist() if n.startswith("META-INF/licenses/") and n.count("/") > 2}
        # Every artifact under a license other than Apache-2.0 (the jar's LICENSE) has its license text in the jar.
        assert {"com.google.protobuf.protobuf-java", "org.reactivestreams.reactive-streams"} <= folders
        # Dependencies' own legal files live under licenses/<artifact>/ only: none overwrote or joined the jar's.
        stray = [n for n in jar.namelist() if n.startswith("META-INF/") and n.count("/") == 1 and "LICENSE" in n]
        assert stray == ["META-INF/LICENSE"]


def test_the_wheel_carries_both_jars_as_published_with_licenses(maven_repo: Path, version: str, wheel: Path) -> None:
    assert wheel.name == f"pyspark_kinesis-{python_version(version)}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"pyspark_kinesis-{python_version(version)}.dist-info"
        assert archive.read(f"{info}/licenses/LICENSE") == (REPO / "LICENSE").read_bytes()
        assert archive.read(f"{info}/licenses/NOTICE") == (REPO / "NOTICE").read_bytes()
        metadata = archive.read(f"{info}/METADATA").decode()
        assert "License-Expression: Apache-2.0" in metadata
        for scala in LINES:
            published = artifact_dir(maven_repo, scala, version) / f"spark-kinesis_{scala}-{version}.jar"
            inside = f"pyspark_kinesis/jars/spark-kinesis-assembly_{scala}-{version}.jar"
            assert archive.read(inside) == published.read_bytes(), f"the wheel's {scala} jar is not the published one"
            with zipfile.ZipFile(published) as jar:
                assert archive.read(f"pyspark_kinesis/jars/THIRD-PARTY_{scala}.txt") == jar.read(
                    "META-INF/THIRD-PARTY.txt"
                )
        assert sum(n.endswith(".jar") for n in names) == len(LINES)


def test_the_sdist_holds_the_package_licenses_and_jars(version: str) -> None:
    sdists = sorted((REPO / "dist" / "python").glob("pyspark_kinesis-*.tar.gz"))
    assert [s.name for s in sdists] == [f"pyspark_kinesis-{python_version(version)}.tar.gz"]
    with tarfile.open(sdists[0]) as sdist:
        top = f"pyspark_kinesis-{python_version(version)}"
        members = {m.name: m for m in sdist.getmembers()}
        for name in ("LICENSE", "NOTICE", "pyproject.toml", "pyspark_kinesis/__init__.py"):
            assert members[f"{top}/{name}"].isfile(), name  # real files, not the checkout's links
        assert not any("/tests" in n for n in members), "the sdist ships the test folders"
