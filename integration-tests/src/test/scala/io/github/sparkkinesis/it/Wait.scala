package io.github.sparkkinesis.it

import java.time.{Duration, Instant}

import org.scalatest.Assertions.fail

/** Waits for a condition, polling, and fails with what it waited for when the timeout passes. */
object Wait {
  def until(what: String, timeout: Duration = Duration.ofSeconds(60))(condition: => Boolean): Unit = {
    val deadline = Instant.now().plus(timeout)
    while (!condition) {
      if (Instant.now().isAfter(deadline)) fail(s"timed out after $timeout waiting for: $what")
      Thread.sleep(50)
    }
  }
}
