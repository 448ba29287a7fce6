package io.github.sparkkinesis.simulator

import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model._

import scala.jdk.CollectionConverters._

/**
 * `clockOffsetMs`: Kinesis' clock ahead of or behind the client's, as the AWS SDK v2 sees it in arrival timestamps
 * and AT_TIMESTAMP positioning, including the offset moving while the server runs.
 */
class SdkClockOffsetSuite extends AnyFunSuite with SimulatorFixture {

  private def put(stream: String, data: String) = kinesis.putRecord(PutRecordRequest.builder().streamName(stream)
    .partitionKey("k").data(SdkBytes.fromUtf8String(data)).build())

  private def iterator(stream: String, shard: String, tpe: ShardIteratorType, at: Instant = null) =
    kinesis.getShardIterator(GetShardIteratorRequest.builder().streamName(stream).shardId(shard)
      .shardIteratorType(tpe).timestamp(at).build()).shardIterator()

  private def read(it: String) = kinesis.getRecords(GetRecordsRequest.builder().shardIterator(it).build())

  /** The record put now, read back, and how far its arrival time is from the test's clock (bounds around the put). */
  private def skewOfPut(stream: String, shard: String, data: String): (Long, Long) = {
    val before = System.currentTimeMillis()
    val seq = put(stream, data).sequenceNumber()
    val after = System.currentTimeMillis()
    val record = read(iterator(stream, shard, ShardIteratorType.TRIM_HORIZON)).records().asScala
      .find(_.sequenceNumber() == seq).get
    val arrival = record.approximateArrivalTimestamp().toEpochMilli
    (arrival - after, arrival - before)
  }

  test("arrival timestamps run the offset ahead of or behind the client's clock, and the offset can move") {
    admin.clockOffset(5000)
    val ahead = newStreamName("ahead")
    val Seq(aheadShard) = createStream(ahead, 1)
    val (aheadLow, aheadHigh) = skewOfPut(ahead, aheadShard, "ahead")
    assert(aheadLow >= 4000 && aheadHigh <= 6500, s"arrival $aheadLow..$aheadHigh ms from the client's clock")

    admin.clockOffset(-5000)
    val behind = newStreamName("behind")
    val Seq(behindShard) = createStream(behind, 1)
    val (behindLow, behindHigh) = skewOfPut(behind, behindShard, "behind")
    assert(behindLow >= -6500 && behindHigh <= -4000, s"arrival $behindLow..$behindHigh ms from the client's clock")

    // On the shard written 5 s ahead, arrival times do not go back with the clock (AT_TIMESTAMP's binary search
    // relies on it), and the later record is not "behind" by a negative amount.
    put(ahead, "after the move")
    val arrivals = read(iterator(ahead, aheadShard, ShardIteratorType.TRIM_HORIZON)).records().asScala
      .map(_.approximateArrivalTimestamp())
    assert(arrivals.size == 2 && !arrivals(1).isBefore(arrivals(0)), arrivals)
    val first = kinesis.getRecords(GetRecordsRequest.builder().shardIterator(
      iterator(ahead, aheadShard, ShardIteratorType.TRIM_HORIZON)).limit(1).build())
    assert(first.millisBehindLatest() == 0L)
  }

  test("AT_TIMESTAMP on the client's clock: a record put on a clock ahead is found from 2 s after the put, " +
    "one put on a clock behind not from just before it") {
    admin.clockOffset(5000)
    val ahead = newStreamName("ahead")
    val Seq(aheadShard) = createStream(ahead, 1)
    put(ahead, "from the future")
    val later = Instant.now().plusSeconds(2)
    val found = read(iterator(ahead, aheadShard, ShardIteratorType.AT_TIMESTAMP, later)).records().asScala
    assert(found.map(_.data().asUtf8String()) == Seq("from the future"))

    admin.clockOffset(-5000)
    val behind = newStreamName("behind")
    val Seq(behindShard) = createStream(behind, 1)
    val beforePut = Instant.now()
    put(behind, "from the past")
    assert(read(iterator(behind, behindShard, ShardIteratorType.AT_TIMESTAMP, beforePut)).records().isEmpty)
    val earlier = read(iterator(behind, behindShard, ShardIteratorType.AT_TIMESTAMP, beforePut.minusSeconds(10)))
    assert(earlier.records().asScala.map(_.data().asUtf8String()) == Seq("from the past"))
  }

  test("the admin API shows both settings and refuses values of the wrong type") {
    val shown = admin.call("GET", "settings")
    assert(shown.path("clockOffsetMs").asLong(-1) == 0L && shown.path("splitEndAnswer").isBoolean)
    assert(admin.clockOffset(-1234).path("clockOffsetMs").asLong() == -1234L)
    assert(admin.splitEndAnswer(on = true).path("splitEndAnswer").asBoolean())
    intercept[IllegalArgumentException](admin.settings("""{"clockOffsetMs": 1.5}"""))
    intercept[IllegalArgumentException](admin.settings("""{"splitEndAnswer": "yes"}"""))
    val kept = admin.call("GET", "settings")
    assert(kept.path("clockOffsetMs").asLong() == -1234L && kept.path("splitEndAnswer").asBoolean())
  }

  test("responses carry a Date header in whole seconds on the simulator's clock, offset included") {
    for (offset <- Seq(5000L, -5000L, 0L)) {
      admin.clockOffset(offset)
      val before = System.currentTimeMillis()
      val response = kinesis.listStreams(ListStreamsRequest.builder().build())
      val after = System.currentTimeMillis()
      val date = response.sdkHttpResponse().firstMatchingHeader("Date").get()
      val millis = java.time.ZonedDateTime.parse(date, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME)
        .toInstant.toEpochMilli
      // The server read its clock between `before` and `after` (shifted by the offset), then dropped the millis.
      assert(millis % 1000 == 0 && millis > before + offset - 1000 && millis <= after + offset, s"$offset: $date")
    }
  }

  test("the admin API's forced expiry goes by order of issue: an iterator issued after it lives, whatever the clock " +
    "did since (the offset moved back), and one issued before it is refused saying the admin API expired it") {
    val stream = newStreamName("expiry")
    val Seq(shard) = createStream(stream, 1)
    put(stream, "one")
    admin.clockOffset(1000)
    val before = iterator(stream, shard, ShardIteratorType.TRIM_HORIZON)
    admin.expireIterators()
    admin.clockOffset(0) // the clock goes back a second: an iterator issued now is "older" than the expiry was
    val after = iterator(stream, shard, ShardIteratorType.TRIM_HORIZON)
    assert(read(after).records().asScala.map(_.data().asUtf8String()) == Seq("one"))
    val refused = intercept[ExpiredIteratorException](read(before))
    assert(refused.getMessage.contains("admin API expired every iterator issued before its call"), refused.getMessage)
  }
}
