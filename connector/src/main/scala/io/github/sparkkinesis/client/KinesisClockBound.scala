package io.github.sparkkinesis.client

import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter

import software.amazon.awssdk.http.SdkHttpResponse

/**
 * A lower bound on Kinesis' clock as this JVM's clock reads it, learnt from the `Date` header of its responses
 * (RFC 1123, whole seconds, as AWS sends it). Kinesis stamps records' `ApproximateArrivalTimestamp` with its own
 * clock, which need not agree with this machine's: a position on its clock taken from ours (`latest` pinned as
 * "records that arrived from now on") loses the records put right after the start whenever Kinesis' clock is
 * behind. A response dated D that arrived at our L was dated no later than when it arrived, so Kinesis' clock was at
 * least D - L ahead of ours then (D is truncated to its second: the bound is up to a second low, never high). The
 * largest such bound over the responses seen holds; none seen (no header: some proxies strip it) is None.
 */
final class KinesisClockBound {
  @volatile private var aheadAtLeast: Option[Long] = None

  def observe(response: SdkHttpResponse, receivedMillis: Long): Unit = {
    val date = response.firstMatchingHeader("Date")
    if (date.isPresent) KinesisClockBound.parse(date.get).foreach { d =>
      val ahead = d - receivedMillis
      synchronized { if (aheadAtLeast.forall(_ < ahead)) aheadAtLeast = Some(ahead) }
    }
  }

  /** At our `localMillis`, Kinesis' clock reads at least this, when a response told. */
  def kinesisMillisAtLeast(localMillis: Long): Option[Long] = aheadAtLeast.map(localMillis + _)
}

object KinesisClockBound {
  def parse(date: String): Option[Long] =
    try Some(ZonedDateTime.parse(date.trim, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant.toEpochMilli)
    catch { case _: java.time.format.DateTimeParseException => None }
}
