package io.github.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.executor.{ArrivalClock, ShardCadence}

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

  test("a call goes on the cadence only when that is no later than planned, and never inside the pacing") {
    assert(ShardCadence.aligned(1000, Some(600), 200) == 600)
    assert(ShardCadence.aligned(1000, Some(100), 200) == 200)
    assert(ShardCadence.aligned(1000, Some(1500), 200) == 1000)
    assert(ShardCadence.aligned(1000, Some(1000), 200) == 1000)
    assert(ShardCadence.aligned(1000, None, 200) == 1000)
  }

  private val ms = 1000000L

  /** A feed's answers of one record each at `arrivals`, read `readAfter` ms later; the calls each planned. */
  private def answers(
      c: ShardCadence,
      clock: ArrivalClock,
      arrivals: Seq[Long],
      readAfter: Long): Seq[(Long, ShardCadence.CadenceCall)] =
    arrivals.map { a =>
      val now = a + readAfter
      c.answered(1, a, atTip = true, clock, now)
      (c.nextCall(1, atTip = true, clock, now * ms, now, (now + 1000) * ms, (now + 200) * ms), c.nextCallIs)
    }

  /** An empty answer read at `now` (ms), and the next call when planned a second later, paced at 200 ms. */
  private def empty(c: ShardCadence, clock: ArrivalClock, now: Long): (Long, ShardCadence.CadenceCall) = {
    c.answered(0, 0, atTip = true, clock, now)
    (c.nextCall(0, atTip = true, clock, now * ms, now, (now + 1000) * ms, (now + 200) * ms), c.nextCallIs)
  }

  test("a regular shard polled 600 ms after its records is called just after the next one is due, then on each") {
    val (c, clock) = (new ShardCadence, new ArrivalClock())
    val calls = answers(c, clock, Seq(0L, 1000L, 2000L, 3000L, 4000L), readAfter = 600)
    assert(calls.take(4).forall { case (at, made) => made == ShardCadence.Unplanned && at % (1000 * ms) == 600 * ms })
    assert(calls(4) == ((5000 + 20) * ms, ShardCadence.Due))
    // on the cadence: each record read 20 ms after it arrived, the next call a second later
    assert(answers(c, clock, Seq(5000L, 6000L), readAfter = 20) ==
      Seq(((6000 + 20) * ms, ShardCadence.Due), ((7000 + 20) * ms, ShardCadence.Due)))
  }

  test("a call that finds nothing when its record was due is made once more, then the shard is polled as planned") {
    val (c, clock) = (new ShardCadence, new ArrivalClock())
    answers(c, clock, Seq(0L, 1000L, 2000L, 3000L, 4000L), readAfter = 600)
    c.answered(0, 0, atTip = true, clock, 5020) // the record due at 5000 is late
    // once more after the margin, not inside the pacing
    assert(c.nextCall(0, atTip = true, clock, 5020 * ms, 5020, 6020 * ms, 5220 * ms) == 5220 * ms)
    assert(c.nextCallIs == ShardCadence.Retry)
    c.answered(0, 0, atTip = true, clock, 5220) // still nothing: the planned calls, no more retries
    assert(c.nextCall(0, atTip = true, clock, 5220 * ms, 5220, 6220 * ms, 5420 * ms) == 6220 * ms)
    assert(c.nextCallIs == ShardCadence.Unplanned)
  }

  test("a planned call a little before the record is due counts as the due call; well before, it does not") {
    val (c, clock) = (new ShardCadence, new ArrivalClock())
    answers(c, clock, Seq(0L, 1000L, 2000L, 3000L), readAfter = 600)
    c.answered(1, 4000, atTip = true, clock, 4600)
    // due at 5000 + 20 here; the planned call (a second after the last, the cap) comes 10 ms before it
    assert(c.nextCall(1, atTip = true, clock, 4600 * ms, 4600, 5010 * ms, 4800 * ms) == 5010 * ms)
    assert(c.nextCallIs == ShardCadence.Due)
    assert(empty(c, clock, 5010) == (5210 * ms, ShardCadence.Retry)) // it found nothing: once more
    val (d, clock2) = (new ShardCadence, new ArrivalClock())
    answers(d, clock2, Seq(0L, 2000L, 4000L, 6000L), readAfter = 600)
    d.answered(1, 8000, atTip = true, clock2, 8600)
    // a record every 2 s: the call a second later (the cap) is not for it
    assert(d.nextCall(1, atTip = true, clock2, 8600 * ms, 8600, 9600 * ms, 8800 * ms) == 9600 * ms)
    assert(d.nextCallIs == ShardCadence.Unplanned)
  }

  test("after five misses in a row the shard is polled as planned; behind the tip it starts over") {
    val (c, clock) = (new ShardCadence, new ArrivalClock())
    answers(c, clock, Seq(0L, 1000L, 2000L, 3000L, 4000L), readAfter = 600)
    (1 to ShardCadence.MaxMisses).foreach { i =>
      assert(c.nextCallIs == ShardCadence.Due)
      c.answered(0, 0, atTip = true, clock, 0) // the due call finds nothing (its record never comes)
      c.nextCall(0, atTip = true, clock, 0, 0, 1000 * ms, 200 * ms)
      answers(c, clock, (0 to 4).map(k => 100000L * i + 1000 * k), readAfter = 600) // regular again
    }
    assert(c.nextArrivalMillis.isEmpty && c.nextCallIs == ShardCadence.Unplanned)
    c.answered(5, 900000, atTip = false, clock, 900600)
    answers(c, clock, (1 to 5).map(k => 900000L + 1000 * k), readAfter = 600)
    assert(c.nextCallIs == ShardCadence.Due)
  }

  test("only answers to calls not planned on the cadence teach the clock") {
    val (c, clock) = (new ShardCadence, new ArrivalClock())
    answers(c, clock, Seq(0L, 1000L, 2000L, 3000L, 4000L), readAfter = 600)
    assert(c.nextCallIs == ShardCadence.Due)
    c.answered(1, 5100, atTip = true, clock, 5020) // would say Kinesis is 80 ms ahead: a due call's answer, not taken
    assert(clock.offsetMillis == 0)
    c.reset()
    c.answered(1, 6100, atTip = true, clock, 6020) // the same from an unplanned call is taken
    assert(clock.offsetMillis == 80)
  }

  test("the clock takes Kinesis' clock as agreeing with this one unless answers show it ahead, and follows drift") {
    val clock = new ArrivalClock(windowMillis = 1000)
    assert(clock.offsetMillis == 0)
    clock.observe(arrivalMillis = 10000, answeredMillis = 10300) // read late: says nothing
    assert(clock.offsetMillis == 0 && clock.toNanos(13000, 7000 * ms, 12000) == (7000 + 1000) * ms)
    clock.observe(arrivalMillis = 10500, answeredMillis = 10450) // arrived after it was read here: 50 ms ahead
    assert(clock.offsetMillis == 50 && clock.toNanos(13000, 7000 * ms, 12000) == (7000 + 950) * ms)
    clock.observe(11500, 11500) // the next window: the last one still counts
    assert(clock.offsetMillis == 50)
    clock.observe(12600, 12600)
    assert(clock.offsetMillis == 0)
  }
}
