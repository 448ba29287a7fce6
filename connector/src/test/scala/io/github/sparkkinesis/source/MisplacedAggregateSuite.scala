package io.github.sparkkinesis.source

import io.github.sparkkinesis.sink.executor.{KplAggregate, UserEntry}
import io.github.sparkkinesis.source.executor.{KplDeaggregator, RecordBlock, ShardReader}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Instant

import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

/** An aggregate a reshard put into a shard that does not hold all its keys is skipped whole, as the KCL does. */
class MisplacedAggregateSuite extends AnyFunSuite {
  private val key = ShardKey("s", "shardId-000000000002")
  private val half = HashKeySpan.MaxHashKey / 2
  private val lower = HashKeySpan(0, half)
  private val upper = HashKeySpan(half + 1, HashKeySpan.MaxHashKey)

  private def hashOf(partitionKey: String): BigInt = BigInt(1, HashKeySpan.md5Of(partitionKey))
  /** Partition keys whose MD5 falls in the lower half and the upper half. */
  private val (lows, highs) = (0 until 40).map(i => s"user-$i").partition(k => hashOf(k) <= half)

  private def aggregate(entries: UserEntry*): Array[Byte] = {
    val a = new KplAggregate
    entries.foreach(a.add)
    a.encode()
  }
  private def entry(pk: String, hashKey: String = null) = UserEntry(pk, hashKey, s"data-$pk".getBytes(UTF_8))

  private def split(data: Array[Byte], span: Option[HashKeySpan]): (Boolean, Seq[String]) = {
    val out = new RecordBlock.Builder(4)
    val kept = KplDeaggregator.splitInto(out, key, "7", 0L, data, TrimHorizon, span) == KplDeaggregator.Split
    (kept, out.result().iterator.map(_.partitionKey).toSeq)
  }

  test("an aggregate whose keys all hash into the shard's range is split as before") {
    assert(lows.size >= 3 && highs.size >= 3, "the sample keys cover both halves")
    val agg = aggregate(lows.take(3).map(entry(_)): _*)
    assert(split(agg, Some(lower)) == (true, lows.take(3)))
    assert(split(agg, None) == (true, lows.take(3)), "an unknown range checks nothing")
  }

  test("one user record of another shard's keys: the whole aggregate is skipped, none of its records read") {
    val agg = aggregate(entry(lows(0)), entry(lows(1)), entry(highs(0)))
    assert(split(agg, Some(lower)) == (false, Nil))
    assert(split(agg, Some(upper)) == (false, Nil))
    assert(split(agg, Some(HashKeySpan.All)) == (true, Seq(lows(0), lows(1), highs(0))))
  }

  test("an explicit hash key decides where a record belongs, not its partition key's MD5") {
    val inUpper = (half + 12345).toString
    val agg = aggregate(entry(lows(0), inUpper), entry(highs(0)))
    assert(split(agg, Some(upper)) == (true, Seq(lows(0), highs(0))), "the explicit key routes it to the upper half")
    assert(split(agg, Some(lower))._1 == false)
  }

  test("decoding an answer skips the misplaced aggregate, counts it, and keeps the records around it") {
    def record(seq: Int, data: Array[Byte], pk: String) = Record.builder().sequenceNumber(s"49$seq").partitionKey(pk)
      .data(SdkBytes.fromByteArray(data)).approximateArrivalTimestamp(Instant.ofEpochMilli(seq)).build()
    val records = java.util.Arrays.asList(
      record(1, aggregate(entry(lows(0)), entry(lows(1))), "a"),
      record(2, aggregate(entry(lows(2)), entry(highs(0))), "b"),
      record(3, "plain".getBytes(UTF_8), highs(1))
    )
    val poll = ShardReader.decode(key, TrimHorizon, records, 0L, ended = false, filled = false, Some(lower))
    assert(poll.aggregates == AggregateCounts(misplaced = 1, malformed = 0))
    assert(
      poll.records.iterator.map(r => (r.sequenceNumber, r.partitionKey)).toSeq ==
        Seq(("491", lows(0)), ("491", lows(1)), ("493", highs(1))),
      "a plain record is Kinesis' own routing: kept"
    )
  }
}
