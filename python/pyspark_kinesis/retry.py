"""`RetryStrategies`, the same names as the JVM's: a way to write the three retry options.

On a classic session the strategies are the JVM's; on Spark Connect their options are computed here, as the JVM's
``RetryStrategy.options`` writes them.
"""

from __future__ import annotations

from typing import Any

from pyspark_kinesis import _options
from pyspark_kinesis._connect import connect_mode
from pyspark_kinesis._jvm import call, check_int, connector


class RetryStrategy:
    """A retry strategy made by :class:`RetryStrategies`; pass it to ``withRetryStrategy``."""

    def __init__(self, jstrategy: Any, options: dict[str, str] | None = None) -> None:
        self._j = jstrategy  # classic session: the JVM's RetryStrategy
        self._options = options  # Spark Connect: its options, computed here

    @staticmethod
    def _computed(maxAttempts: int | None, initialBackoffMs: int, maxBackoffMs: int) -> RetryStrategy:
        """The strategy as option values (Spark Connect), with the JVM's checks."""
        if maxBackoffMs < initialBackoffMs:
            raise ValueError(f"maxBackoffMs ({maxBackoffMs}) must be at least initialBackoffMs ({initialBackoffMs})")
        return RetryStrategy(None, {
            _options.key("retryMaxAttempts"): "unlimited" if maxAttempts is None else str(maxAttempts),
            _options.key("retryInitialBackoff"): f"{initialBackoffMs}ms",
            _options.key("retryMaxBackoff"): f"{maxBackoffMs}ms",
        })

    def options(self) -> dict[str, str]:
        """The retry options this strategy sets.

        Example::

            >>> RetryStrategies.indefinitely(250).options()["retryMaxAttempts"]
            'unlimited'
        """
        if self._options is not None:
            return dict(self._options)
        return {str(k): str(v) for k, v in dict(call(lambda: self._j.javaOptions())).items()}


class RetryStrategies:
    """Factories mirroring ``io.github.sparkkinesis.RetryStrategies``."""

    @staticmethod
    def indefinitely(intervalMs: int) -> RetryStrategy:
        """Retry without limit, waiting up to ``intervalMs`` (with jitter) between attempts.

        Example::

            >>> KinesisSources.kinesis("clicks").withRetryStrategy(RetryStrategies.indefinitely(250))
        """
        check_int("intervalMs", intervalMs)
        if connect_mode():
            return RetryStrategy._computed(None, intervalMs, intervalMs)
        return RetryStrategy(call(lambda: connector().RetryStrategies.indefinitely(intervalMs)))

    @staticmethod
    def exponential(initialBackoffMs: int, maxBackoffMs: int, maxAttempts: int | None = None) -> RetryStrategy:
        """Exponential backoff with full jitter from ``initialBackoffMs`` to ``maxBackoffMs``; at most
        ``maxAttempts`` attempts when given, else without limit.

        Example::

            >>> RetryStrategies.exponential(100, 3000, maxAttempts=10)
        """
        check_int("initialBackoffMs", initialBackoffMs)
        check_int("maxBackoffMs", maxBackoffMs)
        if maxAttempts is not None:
            check_int("maxAttempts", maxAttempts)
        if connect_mode():
            return RetryStrategy._computed(maxAttempts, initialBackoffMs, maxBackoffMs)
        if maxAttempts is None:
            return RetryStrategy(call(lambda: connector().RetryStrategies.exponential(initialBackoffMs, maxBackoffMs)))
        return RetryStrategy(
            call(lambda: connector().RetryStrategies.exponential(initialBackoffMs, maxBackoffMs, maxAttempts))
        )

    @staticmethod
    def defaultStrategy() -> RetryStrategy:
        """The default: unlimited attempts, exponential backoff with jitter from 100 ms, capped at 3 s."""
        if connect_mode():
            return RetryStrategy._computed(None, 100, 3000)
        return RetryStrategy(call(lambda: connector().RetryStrategies.defaultStrategy()))
