package io.github.sparkkinesis.it

import java.nio.file.{Files, Paths}
import java.time.Duration

import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.FetchPlanner

/** Each initial position on a 4-shard stream, checked against what the producer put. */
class SourceInitialPositionSuite extends AnyFunSuite with SourceTest {

  private def records(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 13}", s"$prefix-$i"))

  test("trim_horizon reads every record of every shard exactly once, in shard order") {
    val stream = newStreamName("trim")
    kinesis.createStream(stream, 4)
    val put = kinesis.putAll(stream, records("a", 60))
    assert(put.map(_.shardId).distinct.size == 4, "the keys should spread over all shards")
    val read = readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon")).records
    assertExactly(read, put)
  }

  test("earliest is trim_horizon") {
    val stream = newStreamName("earliest")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, records("e", 10))
    assertExactly(readAvailableNow(kinesisReader(stream, "initialPosition" -> "EARLIEST")).records, put)
  }

  test("at_timestamp starts at the first record that arrived at or after the timestamp") {
    val stream = newStreamName("ts")
    kinesis.createStream(stream, 4)
    kinesis.putAll(stream, records("before", 20))
    val firstAfter = kinesis.putAll(stream, Seq("key-x" -> "marker")).head
    val marker = kinesis.client.getRecords(
      software.amazon.awssdk.services.kinesis.model.GetRecordsRequest.builder().shardIterator(
        kinesis.client.getShardIterator(software.amazon.awssdk.services.kinesis.model.GetShardIteratorRequest.builder()
          .streamName(stream).shardId(firstAfter.shardId)
          .shardIteratorType("AT_SEQUENCE_NUMBER").startingSequenceNumber(firstAfter.sequenceNumber).build())
          .shardIterator()).limit(1).build()).records().get(0).approximateArrivalTimestamp()
    // Records put from now on arrive at or after the marker; wait until the clock has moved past it so the
    // earlier ones all arrived strictly before.
    eventually("the clock to pass the marker's arrival") { System.currentTimeMillis() > marker.toEpochMilli + 5 }
    val after = kinesis.putAll(stream, records("after", 20))
    val read = readAvailableNow(kinesisReader(stream, "initialPosition" -> "at_timestamp",
      "initialTimestamp" -> marker.toString)).records
    val expected = (firstAfter +: after).filter(_ => true)
    // Records before the marker that arrived in the same millisecond could legitimately be included.
    val extra = read.filterNot(r => expected.exists(_.sequenceNumber == r.sequenceNumber))
    assert(extra.forall(_.data.startsWith("before")) && extra.size <= 20)
    assertExactly(read.filter(r => expected.exists(_.sequenceNumber == r.sequenceNumber)), expected)
    assert(!read.exists(r => r.data.startsWith("before") && BigInt(r.sequenceNumber) < BigInt(firstAfter.sequenceNumber) &&
      r.shardId == firstAfter.shardId), "a record put before the marker, on the marker's shard, was read")
  }

  test("a JSON map of per-shard positions starts each listed shard there and the others at their trim horizon") {
    val stream = newStreamName("json")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, records("j", 40))
    val Seq(shard0, shard1) = kinesis.shardIds(stream).sorted
    val onShard0 = put.filter(_.shardId == shard0)
    val onShard1 = put.filter(_.shardId == shard1)
    val from = onShard0(3)
    val after = onShard1(5)
    val json = s"""{"$shard0":{"at_sequence_number":"${from.sequenceNumber}"},"$shard1":{"after_sequence_number":"${after.sequenceNumber}"}}"""
    val read = readAvailableNow(kinesisReader(stream, "initialPosition" -> json)).records
    assertExactly(read, onShard0.drop(3) ++ onShard1.drop(6))
  }

  test("a JSON map may start a shard at a time: from its first record that arrived at or after it") {
    val stream = newStreamName("json-ts")
    kinesis.createStream(stream, 2)
    val early = kinesis.putAll(stream, records("early", 30))
    val Seq(shard0, shard1) = kinesis.shardIds(stream).sorted
    val lastEarly = kinesis.arrivalMillis(stream, shard0).max
    eventually("the clock to pass the early records' arrival") { System.currentTimeMillis() > lastEarly + 5 }
    val late = kinesis.putAll(stream, records("late", 30))
    assert(late.exists(_.shardId == shard0), "the keys spread over both shards")
    val json = s"""{"$shard0": {"at_timestamp": "${java.time.Instant.ofEpochMilli(lastEarly + 1)}"}}"""
    val read = readAvailableNow(kinesisReader(stream, "initialPosition" -> json)).records
    assertExactly(read, late.filter(_.shardId == shard0) ++ (early ++ late).filter(_.shardId == shard1))
  }

  test("latest reads only records put after the query started, and pins that start in the checkpoint") {
    val stream = newStreamName("latest")
    kinesis.createStream(stream, 4)
    val old = kinesis.putAll(stream, records("old", 20))
    val checkpoint = newCheckpoint()
    val collector = new Collector
    // `latest` reaches back a little before the start (FetchPlanner.LatestLookBackMillis): begin after that.
    val lastOldArrival = System.currentTimeMillis()
    eventually("the old records to be older than latest reaches back") {
      System.currentTimeMillis() > lastOldArrival + FetchPlanner.LatestLookBackMillis
    }
    val query = collector.start(kinesisReader(stream), checkpoint, Trigger.ProcessingTime(100))
    try {
      val pin = Paths.get(checkpoint, "sources", "0", "kinesis-initial-offset.json")
      eventually("the initial offset to be pinned") { Files.exists(pin) }
      assert(Files.readString(pin).contains("at_timestamp"))
      val fresh = kinesis.putAll(stream, records("new", 30))
      eventually("the new records to be read") { collector.records.size >= fresh.size }
      query.processAllAvailable()
      assertExactly(collector.records, fresh)
      assert(!collector.records.exists(r => old.exists(_.sequenceNumber == r.sequenceNumber)))
    } finally query.stop()
  }

  test("a restarted query goes on where it stopped: nothing lost, nothing repeated") {
    val stream = newStreamName("restart")
    kinesis.createStream(stream, 4)
    val checkpoint = newCheckpoint()
    var all = Seq.empty[PutRecordResult]
    var read = Seq.empty[ReadRecord]
    for (round <- 1 to 3) {
      all ++= kinesis.putAll(stream, records(s"r$round", 25))
      read ++= readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon"), checkpoint).records
      assertExactly(read, all)
    }
  }

  test("Trigger.AvailableNow stops at the tip seen when it started") {
    val stream = newStreamName("avnow")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, records("n", 15))
    val collector = readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon"))
    assertExactly(collector.records, put)
    assert(collector.batchIds.nonEmpty)
  }

  test("Trigger.AvailableNow reads records that arrived together, however few each call may return") {
    val stream = newStreamName("avnow-limit")
    kinesis.createStream(stream, 1)
    val put = kinesis.putInOneRequest(stream, records("together", 12))
    // kinesis-mock counts MillisBehindLatest from an answer's last record: with every record in one millisecond,
    // an answer its Limit cut short reads 0 ms behind. Calls 2 s apart let a batch end before the next answer.
    assert(kinesis.arrivalMillis(stream, put.head.shardId).distinct.size == 1, "the records share one millisecond")
    val collector = readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon",
      "maxRecordsPerFetch" -> "4", "minFetchPeriod" -> "2s"))
    assertExactly(collector.records, put)
  }

  test("one query reads several streams, each with its own shards and offsets") {
    val (a, b) = (newStreamName("multi-a"), newStreamName("multi-b"))
    kinesis.createStream(a, 2)
    kinesis.createStream(b, 1)
    val checkpoint = newCheckpoint()
    val putA = kinesis.putAll(a, records("a", 20))
    val putB = kinesis.putAll(b, records("b", 10))
    val first = readAvailableNow(kinesisReader(s"$a, $b", "initialPosition" -> "trim_horizon"), checkpoint).records
    assert(first.count(_.data.startsWith("a-")) == 20 && first.count(_.data.startsWith("b-")) == 10)
    assertExactly(first, putA ++ putB)
    val moreB = kinesis.putAll(b, records("b2", 5))
    val second = readAvailableNow(kinesisReader(s"$a,$b", "initialPosition" -> "trim_horizon"), checkpoint).records
    assertExactly(second, moreB)
  }

  test("maxRecordsPerTrigger caps every batch and the query still reads everything") {
    val stream = newStreamName("admit")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, records("m", 35))
    val collector = readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "10"))
    assertExactly(collector.records, put)
    val perBatch = collector.records.groupBy(_.batchId).values.map(_.size)
    assert(perBatch.forall(_ <= 10), s"batch sizes $perBatch")
    assert(perBatch.size >= 4)
  }
}
