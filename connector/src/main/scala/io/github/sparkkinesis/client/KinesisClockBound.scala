package io.github.sparkkinesis.client

import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter

import software.amazon.awssdk.http.SdkHttpResponse

/**
 * Bounds on Kinesis' clock as this JVM's clock reads it, learnt from the `Date` header of its responses (RFC 1123,
 * whole seconds, as AWS sends it). Kinesis stamps records' `ApproximateArrivalTimestamp` with its own clock, which
 * need not agree with this machine's: a position on its clock taken from ours (`latest` pinned as "records that
 * arrived from now on") loses the records put right after the start whenever Kinesis' clock is behind.
 *
 * A response dated D, to a request sent at our S that came back at our R, was dated between S and R, at a time
 * Kinesis' clock read D to D + 999 ms (the header drops the milliseconds). So Kinesis' clock is at least D - R and
 * at most D + 999 - S ahead of ours. The tightest bounds over the responses seen hold; none seen (no header: some
 * proxies strip it) is None.
 */
final class KinesisClockBound {
  @volatile private var aheadAtLeast: Option[Long] = None
  @volatile private var aheadAtMost: Option[Long] = None

  def observe(response: SdkHttpResponse, sentMillis: Long, receivedMillis: Long): Unit = {
    val date = response.firstMatchingHeader("Date")
    if (date.isPresent) KinesisClockBound.parse(date.get).foreach { d =>
      val low = d - receivedMillis
      val high = d + 999 - sentMillis
      synchronized {
        if (aheadAtLeast.forall(_ < low)) aheadAtLeast = Some(low)
        if (aheadAtMost.forall(_ > high)) aheadAtMost = Some(high)
      }
    }
  }

  /** At our `localMillis`, Kinesis' clock reads at least this, when a response told. */
  def kinesisMillisAtLeast(localMillis: Long): Option[Long] = aheadAtLeast.map(localMillis + _)

  /** At our `localMillis`, Kinesis' clock reads at most this, when a response told. */
  def kinesisMillisAtMost(localMillis: Long): Option[Long] = aheadAtMost.map(localMillis + _)
}

object KinesisClockBound {
  def parse(date: String): Option[Long] =
    try Some(ZonedDateTime.parse(date.trim, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant.toEpochMilli)
    catch { case _: java.time.format.DateTimeParseException => None }
}
