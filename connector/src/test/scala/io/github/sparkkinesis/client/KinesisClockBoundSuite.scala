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

  test("a date in whole seconds bounds Kinesis' clock from below; the largest bound seen holds") {
    val clock = new KinesisClockBound
    assert(clock.kinesisMillisAtLeast(0L).isEmpty, "nothing seen yet")
    clock.observe(answer("Fri, 27 Nov 2026 12:00:05 GMT"), noon + 700) // Kinesis ahead by 4.3 s at least
    assert(clock.kinesisMillisAtLeast(noon).contains(noon + 4300))
    clock.observe(answer("Fri, 27 Nov 2026 12:00:05 GMT"), noon + 900) // a weaker bound changes nothing
    assert(clock.kinesisMillisAtLeast(noon).contains(noon + 4300))
    clock.observe(answer("Fri, 27 Nov 2026 12:00:06 GMT"), noon + 1050) // just past its second: tighter
    assert(clock.kinesisMillisAtLeast(noon + 10).contains(noon + 10 + 4950))
  }

  test("Kinesis behind: a negative bound; answers without a date or with a bad one teach nothing") {
    val clock = new KinesisClockBound
    clock.observe(answer(), noon)
    clock.observe(answer("yesterday"), noon)
    assert(clock.kinesisMillisAtLeast(noon).isEmpty)
    clock.observe(answer("Fri, 27 Nov 2026 11:59:55 GMT"), noon + 200)
    assert(clock.kinesisMillisAtLeast(noon).contains(noon - 5200))
  }
}
