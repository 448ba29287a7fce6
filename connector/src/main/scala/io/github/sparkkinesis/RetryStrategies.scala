package io.github.sparkkinesis

import java.time.Duration

import io.github.sparkkinesis.options.KinesisOptions

/**
 * How retryable failures (throttling, 5xx, network errors, timeouts, records Kinesis did not store) are retried,
 * as the builders' `withRetryStrategy` takes it. It is only a way to write the three retry options
 * (`retryMaxAttempts`, `retryInitialBackoff`, `retryMaxBackoff`): `options` is exactly what it sets.
 *
 * @param maxAttempts attempts per call or record, the first included; None retries until it succeeds
 */
final case class RetryStrategy(maxAttempts: Option[Int], initialBackoff: Duration, maxBackoff: Duration) {
  // Messages in the options' words (and units): a Scala or Java caller sets retryMaxAttempts & co. through these.
  maxAttempts.filter(_ < 1).foreach { n =>
    throw new IllegalArgumentException(s"RetryStrategy: maxAttempts (retryMaxAttempts) must be at least 1, got $n")
  }
  if (initialBackoff.isNegative || initialBackoff.toMillis < 1) {
    throw new IllegalArgumentException(
      s"RetryStrategy: the initial backoff (retryInitialBackoff) must be at least 1 ms, got ${initialBackoff.toMillis} ms")
  }
  if (maxBackoff.compareTo(initialBackoff) < 0) {
    throw new IllegalArgumentException(s"RetryStrategy: the max backoff (retryMaxBackoff, ${maxBackoff.toMillis} ms) " +
      s"is below the initial backoff (retryInitialBackoff, ${initialBackoff.toMillis} ms): give a max at least the initial")
  }

  /** The same options as a Java map (for Java and for the Python package, through py4j). */
  def javaOptions(): java.util.Map[String, String] = {
    import scala.jdk.CollectionConverters._
    options.asJava
  }

  def options: Map[String, String] = Map(
    KinesisOptions.RetryMaxAttempts.key -> maxAttempts.fold("unlimited")(_.toString),
    KinesisOptions.RetryInitialBackoff.key -> s"${initialBackoff.toMillis}ms",
    KinesisOptions.RetryMaxBackoff.key -> s"${maxBackoff.toMillis}ms"
  )
}

/** The seed design's retry strategies; usable from Java as `RetryStrategies.indefinitely(250)`. */
object RetryStrategies {
  /**
   * What applies when no strategy is given: retry without limit, exponential backoff with full jitter from
   * 100 ms, capped at 3 s. (Not named `default`, which Java cannot call.)
   */
  val defaultStrategy: RetryStrategy = RetryStrategy(None, Duration.ofMillis(100), Duration.ofSeconds(3))

  /** Retry without limit, waiting up to `intervalMs` (full jitter) between attempts. */
  def indefinitely(intervalMs: Long): RetryStrategy =
    RetryStrategy(None, Duration.ofMillis(intervalMs), Duration.ofMillis(intervalMs))

  /** Exponential backoff with full jitter from `initialBackoffMs` up to `maxBackoffMs`, at most `maxAttempts` tries. */
  def exponential(initialBackoffMs: Long, maxBackoffMs: Long, maxAttempts: Int): RetryStrategy =
    RetryStrategy(Some(maxAttempts), Duration.ofMillis(initialBackoffMs), Duration.ofMillis(maxBackoffMs))

  /** Exponential backoff with full jitter from `initialBackoffMs` up to `maxBackoffMs`, without limit. */
  def exponential(initialBackoffMs: Long, maxBackoffMs: Long): RetryStrategy =
    RetryStrategy(None, Duration.ofMillis(initialBackoffMs), Duration.ofMillis(maxBackoffMs))
}
