package io.github.sparkkinesis.it

import java.nio.file.{Files, Paths}
import java.time.Duration

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.ShardDiscovery
import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, ShardFilter, ShardFilterType}

/**
 * Retention expiry at every point a query can meet it, on the simulator (retention is a runtime setting there, so
 * records and closed shards expire when a test says): before a batch, before a planned batch is replayed, and a
 * parent shard before its children. With failOnDataLoss=true the query fails naming stream, shard and position;
 * with false it goes on with what is left and loses nothing else. And the offset stays small across resharding.
 */
class SourceRetentionSuite extends AnyFunSuite with SimulatorSourceTest {

  private def records(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 3}", f"$prefix-$i%03d"))

  private def reader(stream: String, failOnDataLoss: Boolean, options: (String, String)*) = kinesisReader(stream,
    Seq("initialPosition" -> "trim_horizon", "failOnDataLoss" -> failOnDataLoss.toString) ++ options: _*)

  /**
   * An instant after every record put so far and a second before any put later: the simulator applies a
   * retention given relative to its own clock a moment after [[expireBefore]] computes it, and on a loaded
   * machine that moment can be long enough to expire records put right after the mark.
   */
  private def mark(): Long = {
    val t = System.currentTimeMillis()
    eventually("the clock to move a second past the records put so far") { System.currentTimeMillis() > t + 1000 }
    t + 1
  }

  /** Retention passes `cut`: records that arrived before it, and shards closed before it, are gone for good. */
  private def expireBefore(stream: String, cut: Long): Unit = {
    simulator.admin.settings(s"""{"retentionMillis": ${System.currentTimeMillis() - cut}}""")
    try kinesis.shardIds(stream) // the simulator applies retention on each call that names the stream
    finally simulator.admin.settings("""{"retentionMillis": null}""")
  }

  /** Every message of the failure's causes, as a user reads them in the query's exception. */
  private def failureOf(run: => Any): String = {
    val e = intercept[Exception](run)
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")
  }

  private def assertNames(msg: String, parts: String*): Unit =
    for (part <- parts :+ "failOnDataLoss=false") assert(msg.contains(part), s"'$part' not in: $msg")

  /** Removes a batch's commit from a checkpoint, as a driver killed before committing it leaves it. */
  private def uncommit(checkpoint: String, batch: Long): Unit = {
    Files.delete(Paths.get(checkpoint, "commits", batch.toString))
    Files.deleteIfExists(Paths.get(checkpoint, "commits", s".$batch.crc"))
  }

  for (fail <- Seq(true, false)) {
    test(s"the resume record expired before the next batch (failOnDataLoss=$fail)") {
      val stream = newStreamName("resume")
      kinesis.createStream(stream, 1)
      val checkpoint = newCheckpoint()
      val read = kinesis.putAll(stream, records("read", 10))
      assertExactly(readAvailableNow(reader(stream, fail, "maxRecordsPerTrigger" -> "5"), checkpoint).records, read)
      val cut = mark()
      val later = kinesis.putAll(stream, records("later", 10))
      expireBefore(stream, cut)
      if (fail) {
        assertNames(failureOf(readAvailableNow(reader(stream, fail), checkpoint)),
          s"Kinesis stream '$stream'", read.last.shardId, read.last.sequenceNumber, later.head.sequenceNumber)
      } else assertExactly(readAvailableNow(reader(stream, fail), checkpoint).records, later)
    }

    test(s"a planned batch expired before its replay (failOnDataLoss=$fail)") {
      val stream = newStreamName("replay")
      kinesis.createStream(stream, 1)
      val checkpoint = newCheckpoint()
      val put = kinesis.putAll(stream, records("first", 20))
      val first = readAvailableNow(reader(stream, fail, "maxRecordsPerTrigger" -> "5"), checkpoint)
      assertExactly(first.records, put)
      val last = first.batchIds.max
      assert(last > 0, s"want several batches, got ${first.batchIds}")
      val resumeAt = first.records.filter(_.batchId < last).map(_.sequenceNumber).maxBy(BigInt(_))
      uncommit(checkpoint, last)
      val cut = mark()
      val later = kinesis.putAll(stream, records("later", 10))
      expireBefore(stream, cut)
      if (fail) {
        assertNames(failureOf(readAvailableNow(reader(stream, fail), checkpoint)),
          s"Kinesis stream '$stream'", put.head.shardId, resumeAt)
      } else {
        // The replayed batch has nothing left; the records after it are all read.
        assertExactly(readAvailableNow(reader(stream, fail), checkpoint).records, later)
      }
    }

    test(s"a parent shard expired with records unread before its children (failOnDataLoss=$fail)") {
      val stream = newStreamName("parent")
      kinesis.createStream(stream, 1)
      val parent = kinesis.shardIds(stream).head
      val checkpoint = newCheckpoint()
      val read = kinesis.putAll(stream, records("read", 5))
      assertExactly(readAvailableNow(reader(stream, fail), checkpoint).records, read)
      kinesis.putAll(stream, records("unread", 5))
      kinesis.split(stream, parent)
      val cut = mark()
      val children = kinesis.putAll(stream, records("child", 12))
      expireBefore(stream, cut)
      assert(!kinesis.shardIds(stream).contains(parent), "the parent is no longer listed")
      if (fail) {
        assertNames(failureOf(readAvailableNow(reader(stream, fail), checkpoint)),
          s"Kinesis stream '$stream'", parent, read.last.sequenceNumber)
      } else assertExactly(readAvailableNow(reader(stream, fail), checkpoint).records, children)
    }
  }

  test("a replayed first batch (from trim_horizon) whose planned end expired fails: the end is a record it read") {
    val stream = newStreamName("end")
    kinesis.createStream(stream, 1)
    val checkpoint = newCheckpoint()
    val put = kinesis.putAll(stream, records("first", 5))
    val first = readAvailableNow(reader(stream, failOnDataLoss = true), checkpoint)
    assertExactly(first.records, put)
    assert(first.batchIds == Seq(0L), s"want one batch from the trim horizon, got ${first.batchIds}")
    uncommit(checkpoint, 0)
    val cut = mark()
    val later = kinesis.putAll(stream, records("later", 5))
    expireBefore(stream, cut)
    assertNames(failureOf(readAvailableNow(reader(stream, failOnDataLoss = true), checkpoint)),
      s"Kinesis stream '$stream'", put.head.shardId, put.last.sequenceNumber, later.head.sequenceNumber)
  }

  private val Reshards = 200

  test(s"$Reshards reshards while a query runs: the offset keeps only listed shards, and key order holds") {
    val stream = newStreamName("reshards")
    kinesis.createStream(stream, 1)
    val checkpoint = newCheckpoint()
    val collector = new Collector
    // The test client's resharding waits on DescribeStreamSummary (20 calls/s per account); the source never calls it.
    simulator.admin.settings("""{"quotas": {"describeStreamSummary": false}}""")
    val query = collector.start(reader(stream, failOnDataLoss = true), checkpoint, Trigger.ProcessingTime(0))
    try {
      var put = Seq.empty[PutRecordResult]
      for (i <- 1 to Reshards / 2) {
        put ++= kinesis.putAll(stream, records(f"split$i%03d", 3))
        kinesis.split(stream, openShards(stream).head)
        put ++= kinesis.putAll(stream, records(f"merge$i%03d", 3))
        val Seq(low, high) = openShards(stream)
        kinesis.merge(stream, low, high)
      }
      put ++= kinesis.putAll(stream, records("last", 3))
      eventually("every record put across the reshards to be read", Duration.ofMinutes(8)) {
        query.exception.foreach(e => throw e)
        collector.records.size >= put.size
      }
      val everyShard = kinesis.shardIds(stream).size
      assert(everyShard > Reshards, s"$everyShard shards listed")
      assert(offsetShards(checkpoint, stream).size > Reshards / 2, "while closed shards are listed, the offset holds them")

      // Retention passes every closed shard; the next batch's offset drops them once the source lists them in
      // full again, which a batch's plan asks for when its complete listing is PlannedListingInterval old.
      val cut = mark()
      expireBefore(stream, cut)
      val expired = System.currentTimeMillis()
      eventually("a complete listing to be due for the next batch", Duration.ofSeconds(30)) {
        System.currentTimeMillis() > expired + ShardDiscovery.PlannedListingInterval.toMillis + 500
      }
      put ++= kinesis.putAll(stream, records("after", 3))
      eventually("the records after the expiry to be read") { collector.records.size >= put.size }
      query.processAllAvailable()
      val read = collector.records
      assertExactly(read, put)
      assertKeyOrder(read, put)
      assert(offsetShards(checkpoint, stream) == openShards(stream), "the offset holds the open shard only")
    } finally {
      query.stop()
      simulator.admin.settings("""{"quotas": {"describeStreamSummary": true}}""")
    }
  }

  private def openShards(stream: String): Seq[String] =
    kinesis.control.listShards(ListShardsRequest.builder().streamName(stream)
      .shardFilter(ShardFilter.builder().`type`(ShardFilterType.AT_LATEST).build()).build())
      .shards().asScala.map(_.shardId()).toSeq.sorted

  /** The shards of `stream` in the last offset the query wrote to its checkpoint. */
  private def offsetShards(checkpoint: String, stream: String): Seq[String] = {
    val logs = Paths.get(checkpoint, "offsets").toFile.listFiles().filter(_.getName.forall(_.isDigit))
    val json = Files.readAllLines(logs.maxBy(_.getName.toLong).toPath).asScala.last
    new ObjectMapper().readTree(json).path("streams").path(stream).fieldNames().asScala.toSeq.sorted
  }
}
