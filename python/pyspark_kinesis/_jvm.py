"""Reaching the connector's JVM builders through py4j, and turning JVM failures into Python exceptions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]
from pyspark import SparkContext
from pyspark.errors import IllegalArgumentException
from pyspark.errors.exceptions.captured import CapturedException

T = TypeVar("T")


def jvm() -> Any:
    """The JVM of the active SparkContext."""
    sc = SparkContext._active_spark_context
    if sc is None or sc._jvm is None:
        raise RuntimeError(
            "no active SparkSession: create one first, e.g. "
            "configure_spark(SparkSession.builder).getOrCreate()"
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


def check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def check_int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value
