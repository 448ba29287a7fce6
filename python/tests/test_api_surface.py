"""The public Python API as a whole: its docstrings, parameter names, version, the private PySpark attributes it
relies on, and its page (docs/python.md), so that none of them drifts from the code."""

from __future__ import annotations

import builtins
import importlib.metadata
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest
import tomllib
from pyspark import SparkContext
from pyspark.sql import SparkSession
from pyspark.sql.functions import col

import pyspark_kinesis
from pyspark_kinesis import _options, configure_spark
from pyspark_kinesis._jvm import private

PACKAGE = Path(pyspark_kinesis.__file__).resolve().parent
PYTHON_DIR = PACKAGE.parent
PAGE = PYTHON_DIR.parent / "docs" / "python.md"

CLASSES = [
    pyspark_kinesis.KinesisSources,
    pyspark_kinesis.KinesisSourceBuilder,
    pyspark_kinesis.KinesisSinks,
    pyspark_kinesis.KinesisSinkBuilder,
    pyspark_kinesis.RetryStrategies,
    pyspark_kinesis.RetryStrategy,
]
FUNCTIONS: list[Callable[..., Any]] = [pyspark_kinesis.configure_spark, pyspark_kinesis.connector_jar]


def _public_methods() -> Iterator[tuple[str, Callable[..., Any]]]:
    for cls in CLASSES:
        for name, member in inspect.getmembers(cls, callable):
            if not name.startswith("_"):
                yield f"{cls.__name__}.{name}", member
    for function in FUNCTIONS:
        yield function.__name__, function


PUBLIC = dict(_public_methods())


def _parameters(fn: Callable[..., Any]) -> list[str]:
    return [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]


def _doc(fn: Callable[..., Any]) -> str:
    return " ".join((inspect.getdoc(fn) or "").split())


def test_the_public_surface_is_what_these_tests_walk() -> None:
    assert {
        "KinesisSourceBuilder.withInitialTimestamp",
        "KinesisSinkBuilder.withAggregation",
        "KinesisSourceBuilder.buildStreaming",
        "RetryStrategies.exponential",
        "configure_spark",
    } <= set(PUBLIC)
    assert len(PUBLIC) > 40
    exported = {name for name in pyspark_kinesis.__all__ if inspect.isclass(getattr(pyspark_kinesis, name))}
    assert {c.__name__ for c in CLASSES} <= exported


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_method_documents_parameters_return_raises_and_an_example(name: str) -> None:
    fn = PUBLIC[name]
    doc = _doc(fn)
    assert ">>> " in doc, f"{name}: no example"
    missing = [p for p in _parameters(fn) if f":param {p}:" not in doc]
    assert not missing, f"{name}: parameters without ':param ...:': {missing}"
    assert ":return:" in doc, f"{name}: no ':return:'"
    if _parameters(fn):
        assert ":raises " in doc, f"{name}: takes arguments but documents no ':raises ...:'"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_public_class_has_a_docstring(cls: type) -> None:
    assert len(_doc(cls)) > 40


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_no_parameter_shadows_a_builtin(name: str) -> None:
    shadowing = [p for p in _parameters(PUBLIC[name]) if p in dir(builtins)]
    assert not shadowing, f"{name}: parameters named like builtins: {shadowing}"


def test_the_defaults_the_docstrings_quote_are_the_option_tables() -> None:
    quoted = 0
    for name, fn in PUBLIC.items():
        doc = _doc(fn)
        for match in re.finditer(r"Default \(option ``(\w+)``\): ", doc):
            option = _options.find(match.group(1))
            assert option is not None, f"{name} quotes the default of an unknown option {match.group(1)}"
            assert option.default is not None and doc[match.end() :].startswith(option.default), (
                f"{name}: the default of {option.key} is '{option.default}' in the option table"
            )
            quoted += 1
    assert quoted >= 25


def test_version_is_the_installed_distributions() -> None:
    project = tomllib.loads((PYTHON_DIR / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert pyspark_kinesis.__version__ == importlib.metadata.version("pyspark-kinesis") == project["version"]


# --- private PySpark attributes ---------------------------------------------------------------------------------
# Where PySpark has no public way, the package reads these private attributes (through `_jvm.private`). A PySpark
# release that renames one must fail here, by name, rather than in a user's job.
def _private_attributes(spark: SparkSession) -> list[tuple[object, str, str]]:
    return [
        (SparkSession.builder, "_options", "_jar.configure_spark: the jars already set on a builder"),
        (SparkContext, "_active_spark_context", "_jvm.jvm: the active session's JVM"),
        (spark.sparkContext, "_jvm", "_jvm.jvm: the connector's classes"),
        (spark, "_jsparkSession", "KinesisSourceBuilder.build/buildBatch: the session for the JVM builder"),
        (spark.range(1), "_jdf", "KinesisSinkBuilder.build*: the DataFrame for the JVM builder's checks"),
        (col("x"), "_jc", "KinesisSinks.kinesis: the key and value columns for the JVM builder"),
    ]


def test_the_private_pyspark_attributes_the_package_reads_still_exist(spark: SparkSession) -> None:
    for owner, name, used_by in _private_attributes(spark):
        assert hasattr(owner, name), (
            f"PySpark {pyspark.__version__} no longer has {type(owner).__name__}.{name}, which pyspark_kinesis reads "
            f"in {used_by}: find its replacement and update that code"
        )
    assert isinstance(SparkSession.builder._options, dict)


def test_a_missing_private_attribute_fails_saying_what_changed(spark: SparkSession) -> None:
    builder = SparkSession.builder.master("local[1]")
    del builder._options
    with pytest.raises(
        RuntimeError,
        match=rf"PySpark {re.escape(pyspark.__version__)} has no Builder\._options, "
        r"which pyspark_kinesis reads to keep the jars already set",
    ):
        configure_spark(builder)
    with pytest.raises(RuntimeError, match=r"has no object\._jdf, which pyspark_kinesis reads to test"):
        private(object(), "_jdf", "test")


def test_no_writer_is_made_through_pysparks_private_jwrite() -> None:
    users = [p.name for p in PACKAGE.glob("*.py") if re.search(r"\._jwrite\b", p.read_text(encoding="utf-8"))]
    assert not users, f"{users} set PySpark's private _jwrite: the writers are made with df.write/df.writeStream"


# --- docs/python.md -----------------------------------------------------------------------------------------------
def test_the_python_page_lists_every_public_method_and_no_other() -> None:
    page = PAGE.read_text(encoding="utf-8")
    missing = [name for name in PUBLIC if not re.search(rf"[`.]{name.rsplit('.', 1)[-1]}\(", page)]
    assert not missing, f"docs/python.md does not list {missing}"
    known = {name.rsplit(".", 1)[-1] for name in PUBLIC}
    unknown = {m for m in re.findall(r"\b((?:with|build)[A-Z]?\w*)\(", page) if m not in known}
    assert not unknown, f"docs/python.md names methods the package does not have: {sorted(unknown)}"
