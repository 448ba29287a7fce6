from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import pyspark_kinesis
from pyspark_kinesis import ConnectorJarError, configure_spark, connector_jar


def test_the_package_carries_one_connector_jar_for_scala_213() -> None:
    jar = Path(connector_jar())
    assert jar.is_file()
    assert jar.parent == Path(pyspark_kinesis.__file__).parent / "jars"
    assert jar.name.startswith("spark-kinesis-assembly_2.13-")


def test_configure_spark_keeps_jars_already_on_the_builder() -> None:
    builder = SparkSession.builder.config("spark.jars", "/opt/other.jar")
    configure_spark(builder)
    assert builder._options["spark.jars"].split(",") == ["/opt/other.jar", connector_jar()]
    configure_spark(builder)  # a second call does not add the jar twice
    assert builder._options["spark.jars"].split(",") == ["/opt/other.jar", connector_jar()]


def test_configure_spark_rejects_anything_but_a_builder() -> None:
    with pytest.raises(TypeError, match="builder must be a pyspark.sql.SparkSession.Builder, got str"):
        configure_spark("local[2]")  # type: ignore[arg-type]


def test_a_scala_mismatch_is_reported_with_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pyspark_kinesis._jar._installed_scala_binary_version", lambda: "2.12")
    with pytest.raises(ConnectorJarError, match=r"built for Scala 2\.13, but the installed PySpark uses Scala 2\.12"):
        configure_spark(SparkSession.builder)


def test_a_missing_jar_is_reported_with_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("pyspark_kinesis._jar._JAR_DIR", tmp_path)
    with pytest.raises(ConnectorJarError, match="run 'make build'"):
        connector_jar()


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
