"""`RetryStrategies`, the same names as the JVM's: a way to write the three retry options.

On a classic session the strategies are the JVM's; on Spark Connect their options are computed here, as the JVM's
``RetryStrategy.options`` writes them.
"""

from __future__ import annotations

from typing import Any

from pyspark_kinesis import _options
from pyspark_kinesis._args import INT_MAX, DurationLike, check_int, duration_millis
from pyspark_kinesis._connect import connect_mode
from pyspark_kinesis._jvm import call, connector


class RetryStrategy:
    """How retryable failures (throttling, 5xx, network errors, timeouts, records Kinesis did not store) are
    retried: made by :class:`RetryStrategies`, passed to ``withRetryStrategy`` of either builder. It is only a way
    to write the three options ``retryMaxAttempts``, ``retryInitialBackoff`` and ``retryMaxBackoff``;
    :meth:`options` is exactly what it sets.
    """

    def __init__(self, jstrategy: Any, options: dict[str, str] | None = None) -> None:
        self._j = jstrategy  # classic session: the JVM's RetryStrategy
        self._options = options  # Spark Connect: its options, computed here

    @staticmethod
    def _computed(maxAttempts: int | None, initialBackoffMs: int, maxBackoffMs: int) -> RetryStrategy:
        """The strategy as option values (Spark Connect), as the JVM's ``RetryStrategy.options`` writes them."""
        return RetryStrategy(
            None,
            {
                _options.key("retryMaxAttempts"): "unlimited" if maxAttempts is None else str(maxAttempts),
                _options.key("retryInitialBackoff"): f"{initialBackoffMs}ms",
                _options.key("retryMaxBackoff"): f"{maxBackoffMs}ms",
            },
        )

    def options(self) -> dict[str, str]:
        """The retry options this strategy sets.

        :return: ``retryMaxAttempts`` (a number, or ``unlimited``), ``retryInitialBackoff`` and ``retryMaxBackoff``
            (milliseconds, as ``"<n>ms"``).

        Example::

            >>> RetryStrategies.exponential(100, 3000, maxAttempts=10).options()
            {'retryInitialBackoff': '100ms', 'retryMaxAttempts': '10', 'retryMaxBackoff': '3000ms'}
        """
        if self._options is not None:
            return dict(sorted(self._options.items()))
        return {str(k): str(v) for k, v in sorted(dict(call(lambda: self._j.javaOptions())).items())}

    def __repr__(self) -> str:
        return f"RetryStrategy({self.options()})"


class RetryStrategies:
    """Factories of :class:`RetryStrategy`, mirroring ``io.github.sparkkinesis.RetryStrategies``; they need an
    active SparkSession (classic or Spark Connect).

    Without a strategy (and without the retry options), the connector uses :meth:`defaultStrategy`.
    """

    @staticmethod
    def indefinitely(intervalMs: DurationLike) -> RetryStrategy:
        """Retry without limit, waiting up to ``intervalMs`` (with full jitter) between two attempts.

        :param intervalMs: the longest wait between two attempts, at least 1 ms: an ``int`` of milliseconds, a
            ``datetime.timedelta`` or a duration string such as ``"250ms"``.
        :return: the strategy, for ``withRetryStrategy``.
        :raises TypeError: ``intervalMs`` is not an ``int``, ``timedelta`` or ``str``.
        :raises ValueError: ``intervalMs`` is below 1 ms, not whole milliseconds, or a malformed string.

        Example::

            >>> RetryStrategies.indefinitely(timedelta(milliseconds=250)).options()["retryMaxBackoff"]
            '250ms'
            >>> source = KinesisSources.kinesis("clicks").withRetryStrategy(RetryStrategies.indefinitely(250))
            >>> source.options()["retryMaxAttempts"]
            'unlimited'
        """
        interval = duration_millis("intervalMs", intervalMs)
        if connect_mode():
            return RetryStrategy._computed(None, interval, interval)
        return RetryStrategy(call(lambda: connector().RetryStrategies.indefinitely(interval)))

    @staticmethod
    def exponential(
        initialBackoffMs: DurationLike, maxBackoffMs: DurationLike, maxAttempts: int | None = None
    ) -> RetryStrategy:
        """Exponential backoff with full jitter, from ``initialBackoffMs`` up to ``maxBackoffMs``.

        :param initialBackoffMs: the first backoff, at least 1 ms: an ``int`` of milliseconds, a
            ``datetime.timedelta`` or a duration string such as ``"100ms"``.
        :param maxBackoffMs: the largest backoff, at least ``initialBackoffMs`` (same types).
        :param maxAttempts: attempts per call or record, the first included, at least 1; ``None`` (the default)
            retries until the call succeeds.
        :return: the strategy, for ``withRetryStrategy``.
        :raises TypeError: an argument has the wrong type.
        :raises ValueError: a backoff is below 1 ms or not whole milliseconds, ``maxBackoffMs`` is below
            ``initialBackoffMs``, or ``maxAttempts`` is below 1.

        Example::

            >>> RetryStrategies.exponential("100ms", timedelta(seconds=5), maxAttempts=8).options()
            {'retryInitialBackoff': '100ms', 'retryMaxAttempts': '8', 'retryMaxBackoff': '5000ms'}
        """
        initial = duration_millis("initialBackoffMs", initialBackoffMs)
        largest = duration_millis("maxBackoffMs", maxBackoffMs)
        if largest < initial:
            raise ValueError(f"maxBackoffMs ({largest}) must be at least initialBackoffMs ({initial})")
        attempts = None if maxAttempts is None else check_int("maxAttempts", maxAttempts, maximum=INT_MAX)
        if connect_mode():
            return RetryStrategy._computed(attempts, initial, largest)
        if attempts is None:
            return RetryStrategy(call(lambda: connector().RetryStrategies.exponential(initial, largest)))
        return RetryStrategy(call(lambda: connector().RetryStrategies.exponential(initial, largest, attempts)))

    @staticmethod
    def defaultStrategy() -> RetryStrategy:
        """The strategy that applies when none is given: unlimited attempts, exponential backoff with full jitter
        from 100 ms, capped at 3 s.

        :return: the strategy, for ``withRetryStrategy``.

        Example::

            >>> RetryStrategies.defaultStrategy().options()
            {'retryInitialBackoff': '100ms', 'retryMaxAttempts': 'unlimited', 'retryMaxBackoff': '3000ms'}
        """
        if connect_mode():
            return RetryStrategy._computed(None, 100, 3000)
        return RetryStrategy(call(lambda: connector().RetryStrategies.defaultStrategy()))
