from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import pyspark_kinesis
from pyspark_kinesis import ConnectorJarError, configure_spark, connector_jar


def test_the_package_carries_a_connector_jar_per_spark_line_and_picks_the_installed_ones() -> None:
    jar = Path(connector_jar())
    assert jar.is_file()
    assert jar.parent == Path(pyspark_kinesis.__file__).parent / "jars"
    assert jar.name.startswith("spark-kinesis-assembly_2.13-")  # this venv runs PySpark 4
    spark35 = Path(connector_jar("2.12"))
    assert (
        spark35.is_file() and spark35.parent == jar.parent and spark35.name.startswith("spark-kinesis-assembly_2.12-")
    )
    assert pyspark_kinesis.SCALA_BINARY_VERSIONS == {"2.13": "4.x", "2.12": "3.5"}


@pytest.mark.parametrize(
    "installed, scala",
    [
        (("4.3.0", "2.13"), "2.13"),
        (("4.2.1", "2.13"), "2.13"),
        (("4.1.4", "2.13"), "2.13"),
        (("4.0.5", "2.13"), "2.13"),
        (("3.5.9", "2.12"), "2.12"),
        (("3.5.0", None), "2.12"),
        ((None, "2.12"), "2.12"),
        ((None, None), "2.13"),
    ],
)
def test_configure_spark_picks_the_jar_of_the_installed_spark_line(
    monkeypatch: pytest.MonkeyPatch, installed: tuple[str | None, str | None], scala: str
) -> None:
    monkeypatch.setattr("pyspark_kinesis._jar._installed_spark", lambda: installed)
    assert Path(connector_jar()).name.startswith(f"spark-kinesis-assembly_{scala}-")


def test_configure_spark_keeps_jars_already_on_the_builder() -> None:
    builder = SparkSession.builder.config("spark.jars", "/opt/other.jar")
    configure_spark(builder)
    assert builder._options["spark.jars"].split(",") == ["/opt/other.jar", connector_jar()]
    configure_spark(builder)  # a second call does not add the jar twice
    assert builder._options["spark.jars"].split(",") == ["/opt/other.jar", connector_jar()]


def test_configure_spark_rejects_anything_but_a_builder() -> None:
    with pytest.raises(TypeError, match="builder must be a pyspark.sql.SparkSession.Builder, got str"):
        configure_spark("local[2]")  # type: ignore[arg-type]


@pytest.mark.parametrize("installed", [("3.4.4", "2.12"), ("3.5.9", "2.13"), ("4.3.0", "2.12"), ("3.3.4", None)])
def test_a_spark_without_a_connector_is_reported_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch, installed: tuple[str | None, str | None]
) -> None:
    monkeypatch.setattr("pyspark_kinesis._jar._installed_spark", lambda: installed)
    with pytest.raises(
        ConnectorJarError,
        match=rf"is Spark {installed[0]}.*carries connectors for Scala 2\.13 "
        r"\(Spark 4\.x\), Scala 2\.12 \(Spark 3\.5\) only: install a PySpark 4\.x or 3\.5",
    ):
        configure_spark(SparkSession.builder)


def test_a_scala_version_without_a_jar_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConnectorJarError, match=r"no connector for Scala 2\.11"):
        connector_jar("2.11")


def test_a_missing_jar_is_reported_with_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("pyspark_kinesis._jar._JAR_DIR", tmp_path)
    with pytest.raises(ConnectorJarError, match="run 'make python-jar'"):
        connector_jar()
    (tmp_path / "spark-kinesis-assembly_2.13-0.1.jar").touch()
    with pytest.raises(ConnectorJarError, match=r"no connector jar matching spark-kinesis-assembly_2\.12-\*\.jar"):
        connector_jar("2.12")


def test_the_session_resolves_the_kinesis_short_name_to_the_connector(spark: SparkSession) -> None:
    jvm = spark._jvm
    assert jvm is not None
    provider = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
        "kinesis", spark._jsparkSession.sessionState().conf()
    )
    assert provider.getName() == "io.github.sparkkinesis.KinesisProvider"
    origin = provider.getProtectionDomain().getCodeSource().getLocation().toString()
    assert origin.endswith(Path(connector_jar()).name)


def test_the_session_runs_the_newest_pyspark(spark: SparkSession) -> None:
    assert spark.version.startswith("4.")
