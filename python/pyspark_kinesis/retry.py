"""`RetryStrategies`, the same names as the JVM's: a way to write the three retry options."""

from __future__ import annotations

from typing import Any

from pyspark_kinesis._jvm import call, check_int, connector


class RetryStrategy:
    """A retry strategy made by :class:`RetryStrategies`; pass it to ``withRetryStrategy``."""

    def __init__(self, jstrategy: Any) -> None:
        self._j = jstrategy

    def options(self) -> dict[str, str]:
        """The retry options this strategy sets.

        Example::

            >>> RetryStrategies.indefinitely(250).options()["retryMaxAttempts"]
            'unlimited'
        """
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
        if maxAttempts is None:
            return RetryStrategy(call(lambda: connector().RetryStrategies.exponential(initialBackoffMs, maxBackoffMs)))
        check_int("maxAttempts", maxAttempts)
        return RetryStrategy(
            call(lambda: connector().RetryStrategies.exponential(initialBackoffMs, maxBackoffMs, maxAttempts))
        )

    @staticmethod
    def defaultStrategy() -> RetryStrategy:
        """The default: unlimited attempts, exponential backoff with jitter from 100 ms, capped at 3 s."""
        return RetryStrategy(call(lambda: connector().RetryStrategies.defaultStrategy()))
