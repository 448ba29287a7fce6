from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from pyspark_kinesis import configure_spark


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """A local[2] session with the connector jar bundled in the package."""
    builder = (
        SparkSession.builder.master("local[2]").appName("pyspark-kinesis-tests").config("spark.ui.enabled", "false")
    )
    session = configure_spark(builder).getOrCreate()
    try:
        yield session
    finally:
        session.stop()
