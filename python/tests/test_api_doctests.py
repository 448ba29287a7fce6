"""The examples of pyspark_kinesis's docstrings, run as doctests, one test per docstring.

They run here rather than through ``--doctest-modules`` so that they get the session fixture: a classic local
session with the bundled connector jar (examples only build DataFrames and writers, they start no query). Each
example sees its module's globals plus the names below, as a user's notebook would have them imported.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from datetime import datetime, timedelta, timezone
from types import ModuleType

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.functions import col, struct, to_json

import pyspark_kinesis
from pyspark_kinesis import KinesisSinks, KinesisSources, RetryStrategies


def _modules() -> list[ModuleType]:
    names = sorted(m.name for m in pkgutil.iter_modules(pyspark_kinesis.__path__))
    return [pyspark_kinesis] + [importlib.import_module(f"pyspark_kinesis.{name}") for name in names]


def _docstrings_with_examples() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for m in _modules() for t in finder.find(m, m.__name__) if t.examples]


DOCTESTS = _docstrings_with_examples()


def test_the_examples_are_found() -> None:
    names = {t.name for t in DOCTESTS}
    assert "pyspark_kinesis.builders.KinesisSourceBuilder.withInitialTimestamp" in names
    assert "pyspark_kinesis.retry.RetryStrategies.exponential" in names
    assert len(DOCTESTS) > 40


@pytest.mark.parametrize("test", DOCTESTS, ids=lambda t: t.name.removeprefix("pyspark_kinesis."))
def test_docstring_example(spark: SparkSession, test: doctest.DocTest) -> None:
    test.globs = {
        **test.globs,
        "spark": spark,
        "KinesisSources": KinesisSources,
        "KinesisSinks": KinesisSinks,
        "RetryStrategies": RetryStrategies,
        "col": col,
        "struct": struct,
        "to_json": to_json,
        "datetime": datetime,
        "timedelta": timedelta,
        "timezone": timezone,
    }
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=report.append)
    assert result.attempted > 0
    assert result.failed == 0, "".join(report)
