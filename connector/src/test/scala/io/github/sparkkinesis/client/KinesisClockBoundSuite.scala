package io.github.sparkkinesis.client

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.http.SdkHttpResponse

/** Kinesis' clock from answers' dates: a bound that is never above Kinesis' clock, the tightest one seen. */
class KinesisClockBoundSuite extends AnyFunSuite {
  private def answer(date: String*) = {
    val b = SdkHttpResponse.builder().statusCode(200)
    date.foreach(b.putHeader("Date", _))
    b.build()
  }
  /** 2026-11-27T12:00:00Z */
  private val noon = 1795780800000L

  test("a date in whole seconds bounds Kinesis' clock from below and above; the tightest bounds seen hold") {
    val clock = new KinesisClockBound
    assert(clock.kinesisMillisAtLeast(0L).isEmpty && clock.kinesisMillisAtMost(0L).isEmpty, "nothing seen yet")
    // Sent at 0.6 s past noon, back at 0.7 s, dated 12:00:05: Kinesis ahead by 4.3 s at least, 5.399 s at most.
    clock.observe(answer("Fri, 27 Nov 2026 12:00:05 GMT"), noon + 600, noon + 700)
    assert(clock.kinesisMillisAtLeast(noon).contains(noon + 4300))
    assert(clock.kinesisMillisAtMost(noon).contains(noon + 5399))
    clock.observe(answer("Fri, 27 Nov 2026 12:00:05 GMT"), noon + 100, noon + 900) // weaker bounds change nothing
    assert(
      clock.kinesisMillisAtLeast(noon).contains(noon + 4300) && clock.kinesisMillisAtMost(noon).contains(noon + 5399))
    clock.observe(answer("Fri, 27 Nov 2026 12:00:06 GMT"), noon + 1000, noon + 1050) // just past its second: tighter
    assert(clock.kinesisMillisAtLeast(noon + 10).contains(noon + 10 + 4950))
    assert(clock.kinesisMillisAtMost(noon + 10).contains(noon + 10 + 5399))
    clock.observe(answer("Fri, 27 Nov 2026 12:00:05 GMT"), noon + 850, noon + 860)
    assert(clock.kinesisMillisAtMost(noon).contains(noon + 5149), "sent just before its second ended: tighter")
  }

  test("Kinesis behind: a negative bound; answers without a date or with a bad one teach nothing") {
    val clock = new KinesisClockBound
    clock.observe(answer(), noon, noon)
    clock.observe(answer("yesterday"), noon, noon)
    assert(clock.kinesisMillisAtLeast(noon).isEmpty && clock.kinesisMillisAtMost(noon).isEmpty)
    clock.observe(answer("Fri, 27 Nov 2026 11:59:55 GMT"), noon + 100, noon + 200)
    assert(
      clock.kinesisMillisAtLeast(noon).contains(noon - 5200) && clock.kinesisMillisAtMost(noon).contains(noon - 4101))
  }
}
