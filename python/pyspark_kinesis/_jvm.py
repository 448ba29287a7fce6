"""Reaching the connector's JVM builders through py4j, and turning JVM failures into Python exceptions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pyspark
from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
from pyspark import SparkContext
from pyspark.errors import IllegalArgumentException
from pyspark.errors.exceptions.captured import CapturedException

T = TypeVar("T")


def private(owner: object, name: str, purpose: str) -> Any:
    """``owner.<name>``, a private PySpark attribute this package reads where PySpark has no public way (the py4j
    handles of sessions, DataFrames and Columns; a session builder's options). A PySpark release that drops one
    fails here with what changed, instead of an AttributeError deep in a builder."""
    try:
        return getattr(owner, name)
    except AttributeError:
        owner_name = owner.__name__ if isinstance(owner, type) else type(owner).__name__
        raise RuntimeError(
            f"PySpark {pyspark.__version__} has no {owner_name}.{name}, which pyspark_kinesis reads to {purpose}: "
            "this pyspark-kinesis does not support this PySpark release (it supports PySpark 3.5 and 4.x)"
        ) from None


def jvm() -> Any:
    """The JVM of the active SparkContext."""
    sc = private(SparkContext, "_active_spark_context", "find the active session's JVM")
    if sc is None or private(sc, "_jvm", "reach the connector's classes") is None:
        raise RuntimeError(
            "no active SparkSession: create one first, e.g. configure_spark(SparkSession.builder).getOrCreate()"
        )
    return sc._jvm


def connector() -> Any:
    """The package `io.github.sparkkinesis` in the JVM."""
    return jvm().io.github.sparkkinesis


def call(fn: Callable[[], T]) -> T:
    """Runs a py4j call; a JVM exception becomes ValueError (bad option or argument) or RuntimeError, with the
    JVM's message and without the py4j stack dump."""
    try:
        return fn()
    except IllegalArgumentException as e:  # PySpark's own conversion of the JVM exception
        raise ValueError(str(e)) from None
    except CapturedException as e:
        raise RuntimeError(str(e)) from None
    except Py4JJavaError as e:
        error = e.java_exception
        message = str(error.getMessage())
        if jvm().java.lang.Class.forName("java.lang.IllegalArgumentException").isInstance(error):
            raise ValueError(message) from None
        raise RuntimeError(f"{error.getClass().getName()}: {message}") from None
