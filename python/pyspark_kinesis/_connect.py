"""Spark Connect: telling a Connect session from a classic one, and the option values the builders set there.

On a Connect session there is no JVM in this process, so the builders record the options their methods map to
(the same keys and value spellings as the JVM builders) and hand them to ``format("kinesis").options(...)``; the
connector checks them on the server.
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal

from pyspark import SparkContext
from pyspark.sql.utils import is_remote


def connect_mode() -> bool:
    """True when PySpark runs against Spark Connect: as PySpark decides it (``is_remote()``, which
    ``SparkSession.builder.remote(...)`` turns on), or, with no classic session in this process, when a Connect
    session made with Spark Connect's own builder is active."""
    if is_remote():
        return True
    if SparkContext._active_spark_context is not None:
        return False
    module = sys.modules.get("pyspark.sql.connect.session")
    return module is not None and module.SparkSession.getActiveSession() is not None


def is_connect_session(spark: object) -> bool:
    """True for a ``pyspark.sql.connect.session.SparkSession``; looked up without importing Spark Connect's client
    (it needs grpc), which must already be loaded when such a session exists."""
    module = sys.modules.get("pyspark.sql.connect.session")
    return module is not None and isinstance(spark, module.SparkSession)


def is_connect_dataframe(df: object) -> bool:
    """True for a DataFrame of a Spark Connect session (looked up as :func:`is_connect_session` does)."""
    module = sys.modules.get("pyspark.sql.connect.dataframe")
    return module is not None and isinstance(df, module.DataFrame)


def scala_string(value: str | bool | int | float) -> str:
    """``value`` as the JVM builders write it into an option (Scala's ``toString``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double(value)
    return value


def java_double(value: float) -> str:
    """Java's ``Double.toString``: the shortest digits that round-trip (as Python's ``repr``), laid out as Java
    does: positional for magnitudes in [1e-3, 1e7), else ``d.dddE<exponent>``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(value)  # positional there, as in Java: Python turns to exponents below 1e-4 and from 1e16
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits))
    fraction = mantissa[1:] or "0"
    return f"{'-' if sign else ''}{mantissa[0]}.{fraction}E{exponent + len(digits) - 1}"
