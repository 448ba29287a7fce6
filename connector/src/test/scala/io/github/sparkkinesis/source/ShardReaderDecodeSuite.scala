package io.github.sparkkinesis.source

import java.time.Instant

import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{GetRecordsResponse, Record}
import io.github.sparkkinesis.source.executor.{Poll, ShardReader}

/** A GetRecords answer turned into the user records a reader has not read yet. */
class ShardReaderDecodeSuite extends AnyFunSuite {
  private val key = ShardKey("orders", "shardId-000000000001")
  private def seq(n: Int) = "49" + "0" * 53 + n

  private def answer(seqs: Int*) = GetRecordsResponse.builder()
    .records(seqs.map(n =>
      Record.builder().sequenceNumber(seq(n)).partitionKey(s"key-$n")
        .data(SdkBytes.fromUtf8String(s"payload-$n")).approximateArrivalTimestamp(Instant.ofEpochMilli(n)).build()): _*)
    .nextShardIterator("it").millisBehindLatest(0L).build()

  private def sequenceNumbers(poll: Poll) = (0 until poll.records.size).map(poll.records.sequenceNumber)

  test("a resume AT the last record read drops it and every record before it, and keeps the rest in order") {
    val poll = ShardReader.decode(key, After(seq(5), 0), answer(3, 5, 7, 8, 9), 10000)
    assert(sequenceNumbers(poll) == Seq(seq(7), seq(8), seq(9)))
    assert((0 until 3).map(poll.records.keyString) == Seq("key-7", "key-8", "key-9"))
    assert(new String(poll.records.data(2), "UTF-8") == "payload-9" && poll.records.arrivalMillis(0) == 7L)
    // Bytes count what Kinesis served (and counted against the read quota), kept or not.
    assert(poll.bytes == Seq(3, 5, 7, 8, 9).map(n => s"payload-$n".length + s"key-$n".length).sum)
  }

  test("from the trim horizon every record is new; past the answer's last record none is") {
    assert(sequenceNumbers(ShardReader.decode(key, TrimHorizon, answer(1, 2, 3), 10000)) == Seq(seq(1), seq(2), seq(3)))
    assert(ShardReader.decode(key, After(seq(3), 0), answer(1, 2, 3), 10000).records.isEmpty)
  }

  test("an answer as long as its call's Limit is not the tip at 0 ms behind; a shorter one, or an empty one, is") {
    val cut = ShardReader.decode(key, TrimHorizon, answer(1, 2, 3), 3)
    assert(cut.filled && cut.millisBehindLatest == 0 && !cut.atTip, "more records may have arrived in that ms")
    assert(ShardReader.decode(key, TrimHorizon, answer(1, 2, 3), 4).atTip)
    assert(ShardReader.decode(key, TrimHorizon, answer(), 1).atTip)
    // Counted in Kinesis records: a resume AT a sequence number fills a Limit of 1 with the record it drops.
    val resumed = ShardReader.decode(key, After(seq(3), 0), answer(3), 1)
    assert(resumed.records.isEmpty && !resumed.atTip)
    assert(ShardReader.decode(key, TrimHorizon, answer(1, 2), 0).filled, "a Limit below 1 is sent as 1")
  }

  test("GetRecords names its stream by ARN when the query was given streamARN, as GetShardIterator does") {
    val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/orders"
    assert(ShardReader.getRecords("it", 500, Some(arn)).streamARN() == arn)
    assert(ShardReader.getRecords("it", 500).streamARN() == null)
    assert(ShardReader.getRecords("it", 20000).limit() == 10000)
  }
}
