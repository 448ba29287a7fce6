package io.github.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite

/** When a regular shard's next record is due, and Kinesis' clock as the JVM sees it. */
class ShardCadenceSuite extends AnyFunSuite {
  /** A cadence that saw one record an answer, arriving at `arrivals` (ms). */
  private def seen(arrivals: Long*): ShardCadence = {
    val c = new ShardCadence
    arrivals.foreach(c.observe(1, _))
    c
  }

  test("a record a second: due a second after the newest once three gaps in a row agreed") {
    assert(seen(0, 1000, 2000, 3000).nextArrivalMillis.isEmpty) // two agreeing gaps: could be a coincidence
    val c = seen(0, 1000, 2010, 2995, 4000)
    // twice the gaps' recent disagreement: 25 ms (985 against 1010), fading by an eighth a gap
    assert(c.nextArrivalMillis.contains(5005) && c.marginMillis == 2 * (25 - 25 / 8))
  }

  test("gaps that differ, or answers of several records, plan nothing") {
    assert(seen(0, 1000, 1400, 2900, 3100, 4000).nextArrivalMillis.isEmpty)
    val c = seen(0, 1000, 2000, 3000, 4000)
    c.observe(2, 5000)
    assert(c.nextArrivalMillis.isEmpty)
  }

  test("a call that found nothing when a record was due stops the cadence until gaps agree again, with more margin") {
    val c = seen(0, 1000, 2000, 3000, 4000)
    c.missed()
    assert(c.nextArrivalMillis.isEmpty)
    Seq(5100L, 6100L, 7100L).foreach(c.observe(1, _))
    assert(c.nextArrivalMillis.contains(8100))
    assert(c.marginMillis == 2 * (100 - 100 / 8) + ShardCadence.MinMarginMillis) // 5100's lateness, and the miss
  }

  test("the records an answer found took from the newest of the answer before to arrive, by their arrival times") {
    val c = new ShardCadence
    assert(c.observe(1, 1000) == -1)
    assert(c.observe(3, 1600) == 600)
    assert(c.observe(1, 1500) == 0) // clocks of Kinesis' hosts may disagree a little: never negative
  }

  test("behind the tip the cadence starts over") {
    val c = seen(0, 1000, 2000, 3000, 4000)
    c.reset()
    c.observe(1, 5000)
    assert(c.nextArrivalMillis.isEmpty)
  }

  test("the margin is at least 20 ms and at most a quarter of the gap") {
    assert(seen(0, 1000, 2000, 3000, 4000).marginMillis == ShardCadence.MinMarginMillis)
    assert(seen(0, 40, 80, 120, 160).marginMillis == 10)
  }

  test("a call goes on the cadence only when that is sooner than planned, and never inside the pacing") {
    assert(ShardCadence.aligned(1000, Some(600), 200) == 600)
    assert(ShardCadence.aligned(1000, Some(100), 200) == 200)
    assert(ShardCadence.aligned(1000, Some(1500), 200) == 1000)
    assert(ShardCadence.aligned(1000, None, 200) == 1000)
  }

  test("the clock keeps the largest bound (arrival - answered) and maps arrivals to nanoTime") {
    val clock = new ArrivalClock(windowMillis = 60000)
    assert(clock.offsetMillis.isEmpty && clock.toNanos(0, 0, 0).isEmpty)
    clock.observe(arrivalMillis = 10000, answeredMillis = 10300) // read late: a loose bound
    clock.observe(arrivalMillis = 11000, answeredMillis = 11005)
    clock.observe(arrivalMillis = 12000, answeredMillis = 12400)
    assert(clock.offsetMillis.contains(-5))
    // arrival 13000 on Kinesis' clock is 13005 here: 1005 ms after a reading of 12000 ms taken at nanoTime 7e9
    assert(clock.toNanos(13000, 7000000000L, 12000).contains(7000000000L + 1005000000L))
  }

  test("the clock follows drift: a bound older than two windows is forgotten, none new keeps the last") {
    val clock = new ArrivalClock(windowMillis = 1000)
    clock.observe(0, -50) // Kinesis 50 ms ahead
    clock.observe(1500, 1500) // next window: the clocks agree now
    assert(clock.offsetMillis.contains(50)) // the last window still counts
    clock.observe(2600, 2600)
    assert(clock.offsetMillis.contains(0))
    assert(new ArrivalClock(1000).offsetMillis.isEmpty)
  }
}
