package io.github.sparkkinesis.client

import java.time.Duration

import software.amazon.awssdk.retries.api.BackoffStrategy

/**
 * Backoff for retries the connector drives itself (records a PutRecords call accepted but did not store, reads
 * the source repeats), built from the same [[RetryConfig]] and the same SDK primitive as the clients' own retry
 * strategy, so a user's retry options mean one thing everywhere.
 *
 * Attempts count from 1 (the first try); `delayBefore(n)` is the pause before attempt `n >= 2`.
 */
final class RetryBackoff(val config: RetryConfig) extends Serializable {
  @transient private lazy val strategy: BackoffStrategy = RetryBackoff.strategy(config)

  def delayBefore(attempt: Int): Duration = strategy.computeDelay(math.max(2, attempt))

  /** True when an item that has already been tried `attemptsMade` times may not be tried again. */
  def exhausted(attemptsMade: Int): Boolean = config.maxAttempts.exists(attemptsMade >= _)
}

object RetryBackoff {
  /** Exponential backoff with full jitter between the configured bounds. */
  def strategy(config: RetryConfig): BackoffStrategy =
    BackoffStrategy.exponentialDelay(config.initialBackoff, config.maxBackoff)
}
