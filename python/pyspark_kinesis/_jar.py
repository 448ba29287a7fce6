"""Locating the connector jar shipped inside this package and putting it on a Spark session."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from pyspark.sql import SparkSession

from pyspark_kinesis._jvm import private

#: The connector jars the package carries: Scala binary version -> the Spark line that jar is built for.
SCALA_BINARY_VERSIONS: dict[str, str] = {"2.13": "4.x", "2.12": "3.5"}

_JAR_DIR = Path(__file__).resolve().parent / "jars"


class ConnectorJarError(RuntimeError):
    """The connector jar is missing, or none matches the installed PySpark: raised by :func:`connector_jar` and
    :func:`configure_spark`, with what to do."""


def _jar_pattern(scala_binary_version: str) -> str:
    return f"spark-kinesis-assembly_{scala_binary_version}-*.jar"


def connector_jar(scala_binary_version: str | None = None) -> str:
    """The absolute path of the connector jar bundled in this package, e.g. for ``spark-submit --jars`` or a Spark
    Connect server's ``--jars``.

    The package carries one jar per Spark line: ``2.13`` for Spark 4.x and ``2.12`` for Spark 3.5.

    :param scala_binary_version: ``"2.13"`` or ``"2.12"``; default: the one of the installed PySpark (or of
        ``SPARK_HOME`` when set).
    :return: the jar's absolute path.
    :raises ConnectorJarError: the installed Spark is neither a 4.x nor a 3.5 one, ``scala_binary_version`` is
        another version, or the package was installed without its jar (for example a source checkout that has not
        run ``make python-jar``).

    Example::

        >>> from pyspark_kinesis import connector_jar
        >>> path = connector_jar()
        >>> os.path.basename(path).startswith("spark-kinesis-assembly_"), path.endswith(".jar")
        (True, True)
    """
    scala = scala_binary_version if scala_binary_version is not None else _matching_scala_binary_version()
    if scala not in SCALA_BINARY_VERSIONS:
        raise ConnectorJarError(f"no connector for Scala {scala}: this package carries jars for " + _supported())
    jars = sorted(_JAR_DIR.glob(_jar_pattern(scala)))
    if not jars:
        raise ConnectorJarError(
            f"no connector jar matching {_jar_pattern(scala)} in {_JAR_DIR}: install the pyspark-kinesis wheel, "
            "or run 'make python-jar' in a source checkout"
        )
    if len(jars) > 1:
        raise ConnectorJarError(f"several connector jars in {_JAR_DIR}: {[j.name for j in jars]}; keep one")
    return str(jars[0])


def _supported() -> str:
    return ", ".join(f"Scala {scala} (Spark {line})" for scala, line in SCALA_BINARY_VERSIONS.items())


def _installed_spark() -> tuple[str | None, str | None]:
    """(Spark version, Scala binary version) of the Spark that runs: ``SPARK_HOME``'s, else PySpark's own.

    Read from the names of its ``spark-core`` and ``scala-library`` jars; a part that cannot be read is ``None``.
    """
    import pyspark

    spark_home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    spark = scala = None
    for path in glob.glob(os.path.join(spark_home, "jars", "spark-core_*.jar")):
        match = re.fullmatch(r"spark-core_(\d+\.\d+)-(\d+\.\d+\.\d+.*)\.jar", os.path.basename(path))
        if match:
            scala, spark = match.group(1), match.group(2)
    if scala is None:
        for path in glob.glob(os.path.join(spark_home, "jars", "scala-library-*.jar")):
            match = re.search(r"scala-library-(\d+\.\d+)\.", os.path.basename(path))
            if match:
                scala = match.group(1)
    return spark, scala


def _matching_scala_binary_version() -> str:
    """The Scala binary version of the jar built for the installed Spark; a clear error when there is none."""
    spark, scala = _installed_spark()
    if spark is None and scala is None:
        return "2.13"  # nothing to read (no jars folder): the Spark 4 jar
    line = None if spark is None else "4.x" if spark.startswith("4.") else ".".join(spark.split(".")[:2])
    for candidate, candidate_line in SCALA_BINARY_VERSIONS.items():
        if line in (None, candidate_line) and scala in (None, candidate):
            return candidate
    found = f"Spark {spark or 'of unknown version'}" + (f" with Scala {scala}" if scala else "")
    raise ConnectorJarError(
        f"the installed PySpark (or SPARK_HOME) is {found}, and this pyspark-kinesis carries connectors for "
        f"{_supported()} only: install a PySpark 4.x or 3.5"
    )


def configure_spark(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled connector jar to ``spark.jars`` of a session builder; no network access is needed.

    The jar is the one built for the installed PySpark: ``spark-kinesis_2.13`` on Spark 4.x, ``spark-kinesis_2.12``
    on Spark 3.5. Jars already set on the builder are kept. Call it before ``getOrCreate()``: jars cannot be added
    to a session that is already running (``getOrCreate()`` then returns that session unchanged).

    :param builder: a classic session builder (``SparkSession.builder``); a Spark Connect client needs no jar, its
        server does (see :func:`connector_jar`).
    :return: ``builder``, with the jar added to ``spark.jars``.
    :raises TypeError: ``builder`` is not a ``SparkSession.Builder``.
    :raises ConnectorJarError: the installed PySpark is neither a 4.x nor a 3.5, or its jar is missing.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> from pyspark_kinesis import configure_spark
        >>> spark = configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
        >>> connector_jar() in spark.conf.get("spark.jars").split(",")
        True

    A session made from it (``builder.getOrCreate()``) reads and writes ``format("kinesis")``.
    """
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(f"builder must be a pyspark.sql.SparkSession.Builder, got {type(builder).__name__}")
    jar = connector_jar()
    # PySpark has no public getter for a builder's options; without reading them, spark.jars set earlier would go.
    options = private(builder, "_options", "keep the jars already set on the builder")
    existing = options.get("spark.jars", "")
    jars = [j for j in existing.split(",") if j] if existing else []
    if jar not in jars:
        jars.append(jar)
    return builder.config("spark.jars", ",".join(jars))
