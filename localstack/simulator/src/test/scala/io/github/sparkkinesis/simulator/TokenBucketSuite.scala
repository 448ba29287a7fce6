package io.github.sparkkinesis.simulator

import org.scalatest.funsuite.AnyFunSuite

class TokenBucketSuite extends AnyFunSuite {

  test("a clock that goes back counts as no time passed: the bucket refills from the new time, not the old one") {
    val bucket = new TokenBucket(5, 10000L)
    assert((1 to 5).forall(_ => bucket.take(1, 10000L)))
    assert(!bucket.take(1, 10000L))
    // The clock offset moves from +5 s to -5 s.
    assert(!bucket.take(1, 0L), "going back refills nothing")
    assert(bucket.take(1, 200L), "200 ms after the jump one token (5/s) is back, not 10 s later")
  }
}
