"""Locating the connector jar shipped inside this package and putting it on a Spark session."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from pyspark.sql import SparkSession

#: Scala binary version the bundled connector jar is built for.
SCALA_BINARY_VERSION = "2.13"

_JAR_DIR = Path(__file__).resolve().parent / "jars"
_JAR_PATTERN = f"spark-kinesis-assembly_{SCALA_BINARY_VERSION}-*.jar"


class ConnectorJarError(RuntimeError):
    """The connector jar is missing, or it does not match the installed PySpark."""


def connector_jar() -> str:
    """Return the absolute path of the connector jar bundled in this package.

    Example::

        >>> from pyspark_kinesis import connector_jar
        >>> connector_jar().endswith(".jar")
        True

    Raises:
        ConnectorJarError: the package was installed without its jar (for example a source checkout that has
            not run ``make build``).
    """
    jars = sorted(_JAR_DIR.glob(_JAR_PATTERN))
    if not jars:
        raise ConnectorJarError(
            f"no connector jar matching {_JAR_PATTERN} in {_JAR_DIR}: install the pyspark-kinesis wheel, "
            "or run 'make build' in a source checkout"
        )
    if len(jars) > 1:
        raise ConnectorJarError(f"several connector jars in {_JAR_DIR}: {[j.name for j in jars]}; keep one")
    return str(jars[0])


def _installed_scala_binary_version() -> str | None:
    """Scala binary version of the installed PySpark, read from its bundled scala-library jar."""
    import pyspark

    spark_home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    for path in glob.glob(os.path.join(spark_home, "jars", "scala-library-*.jar")):
        match = re.search(r"scala-library-(\d+\.\d+)\.", os.path.basename(path))
        if match:
            return match.group(1)
    return None


def configure_spark(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled connector jar to ``spark.jars`` of a session builder; no network access is needed.

    Any jars already set on the builder are kept. Call it before ``getOrCreate()``: jars cannot be added to a
    session that is already running.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> from pyspark_kinesis import configure_spark
        >>> spark = configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
        >>> df = spark.readStream.format("kinesis").option("streamName", "events").load()

    Raises:
        TypeError: ``builder`` is not a ``SparkSession.Builder``.
        ConnectorJarError: the jar is missing or built for another Scala version than the installed PySpark.
    """
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(f"builder must be a pyspark.sql.SparkSession.Builder, got {type(builder).__name__}")
    installed = _installed_scala_binary_version()
    if installed is not None and installed != SCALA_BINARY_VERSION:
        raise ConnectorJarError(
            f"this pyspark-kinesis wheel carries a connector built for Scala {SCALA_BINARY_VERSION}, but the "
            f"installed PySpark uses Scala {installed}: install a pyspark-kinesis build for Scala {installed}, "
            "or a PySpark 4.x"
        )
    jar = connector_jar()
    existing = builder._options.get("spark.jars", "")  # noqa: SLF001 - the only way to read a builder's option
    jars = [j for j in existing.split(",") if j] if existing else []
    if jar not in jars:
        jars.append(jar)
    return builder.config("spark.jars", ",".join(jars))
