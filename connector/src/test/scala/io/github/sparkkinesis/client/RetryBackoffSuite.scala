package io.github.sparkkinesis.client

import java.time.Duration

import org.scalatest.funsuite.AnyFunSuite

class RetryBackoffSuite extends AnyFunSuite {
  private val config = RetryConfig(Some(5), Duration.ofMillis(100), Duration.ofMillis(1000))

  test("delays grow exponentially with full jitter and stay within the configured bounds") {
    val b = new RetryBackoff(config)
    def maxOver(attempt: Int) = (1 to 2000).map(_ => b.delayBefore(attempt).toMillis).max
    def minOver(attempt: Int) = (1 to 2000).map(_ => b.delayBefore(attempt).toMillis).min
    assert(maxOver(2) <= 100 && maxOver(2) >= 80, "first retry: up to the initial backoff")
    assert(maxOver(3) <= 200 && maxOver(3) > 100)
    assert(maxOver(4) <= 400 && maxOver(4) > 200)
    assert(maxOver(20) <= 1000 && maxOver(20) > 800, "capped at the maximum backoff")
    assert(minOver(20) < 100, "full jitter reaches down toward zero")
    assert(b.delayBefore(1).toMillis <= 100, "attempt numbers below 2 mean the first retry")
  }

  test("the attempt cap counts the first try; unlimited never runs out") {
    val capped = new RetryBackoff(config)
    assert(!capped.exhausted(4))
    assert(capped.exhausted(5))
    val unlimited = new RetryBackoff(config.copy(maxAttempts = None))
    assert(!unlimited.exhausted(Int.MaxValue))
  }
}
