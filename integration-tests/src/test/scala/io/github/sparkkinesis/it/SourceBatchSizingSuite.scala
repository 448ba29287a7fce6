package io.github.sparkkinesis.it

import java.time.Duration

import io.github.sparkkinesis.source.{KinesisSourceOffset, ShardKey, ShardPosition}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Batch sizing against the simulator: a capped batch is shared in proportion to what each shard has ready (a
 * skewed backlog fills every batch), `minRecordsPerTrigger` holds a batch back until enough records are ready or
 * `maxTriggerDelay` passes, and progress reports as `latestOffset` what the executors hold.
 */
class SourceBatchSizingSuite extends AnyFunSuite with SimulatorSourceTest {

  // A progress report for triggers that run no batch, every 100 ms: the held records show there.
  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.streaming.noDataProgressEventInterval" -> "100ms")

  private def offsetOf(json: String): KinesisSourceOffset = KinesisSourceOffset.fromJson(json)

  /** The sequence numbers `json` holds for the shards `puts` went to. */
  private def positionsIn(json: String, stream: String, puts: Seq[PutRecordResult]): Map[String, BigInt] = {
    val offset = offsetOf(json)
    puts.map(_.shardId).distinct.flatMap { shard =>
      offset.get(ShardKey(stream, shard)).collect { case ShardPosition.After(seq, _) => shard -> BigInt(seq) }
    }.toMap
  }

  /** Each shard's last record of `puts`: where an offset is once the shard is read up to there. */
  private def lastOf(puts: Seq[PutRecordResult]): Map[String, BigInt] =
    puts.groupBy(_.shardId).map { case (shard, ps) => shard -> ps.map(p => BigInt(p.sequenceNumber)).max }

  /** A report of a trigger that ran no batch, showing `puts` held by the executors. */
  private def heldWithoutBatch(query: StreamingQuery, stream: String, puts: Seq[PutRecordResult]): Boolean =
    query.recentProgress.exists { p =>
      p.numInputRows == 0 &&
      Option(p.sources.head.latestOffset).exists(positionsIn(_, stream, puts) == lastOf(puts))
    }

  test("a skewed backlog under maxRecordsPerTrigger fills every batch to the maximum; latestOffset is what executors hold") {
    val stream = newStreamName("skewed")
    kinesis.createStream(stream, 4)
    // One hot shard, three idle: 900 records of one key, within the shard's write quota of 1,000 records a second
    // (1,200 in three quick requests met it: 128 refused once).
    val put = (0 until 900 by 300).flatMap(from =>
      kinesis.putInOneRequest(stream, (from until from + 300).map(i => "hot" -> f"r-$i%04d")))
    val collector = new Collector
    val query = collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon",
      "maxRecordsPerTrigger" -> "200"), newCheckpoint(), Trigger.ProcessingTime(0))
    try {
      eventually("the backlog to be read") { collector.records.size >= put.size }
      eventually("the last batch's progress") { query.recentProgress.map(_.numInputRows).sum >= put.size }
      assertExactly(collector.records, put)
      // Each batch takes what the hot shard has ready, up to the whole cap: shared evenly, each shard's share was
      // 50 records (the hot shard's 900 took 18 batches). What is ready when a trigger plans is what its progress
      // reports as latestOffset; how much that is depends on how far the executors' fetches got, so each batch is
      // checked against its own (under load a batch had 4 records ready, and took them).
      val batches = query.recentProgress.filter(_.numInputRows > 0)
      val hot = put.map(p => BigInt(p.sequenceNumber))
      def upTo(json: String): Int =
        Option(json).flatMap(positionsIn(_, stream, put).values.headOption).fold(0)(seq => hot.count(_ <= seq))
      for (p <- batches) {
        val ready = upTo(p.sources.head.latestOffset) - upTo(p.sources.head.startOffset)
        assert(p.numInputRows == math.min(200, ready), s"batch ${p.batchId}: ${p.numInputRows} rows, $ready ready")
      }
      assert(batches.exists(_.numInputRows > 50), s"no batch took more than an even share: ${batches.map(_.numInputRows)}")
      // The executors held more than a batch took: progress shows it.
      val last = lastOf(put)
      assert(batches.exists(p => positionsIn(p.sources.head.latestOffset, stream, put) == last &&
        positionsIn(p.sources.head.endOffset, stream, put) != last), batches.map(_.sources.head.latestOffset).mkString("\n"))
      for (p <- batches) {
        val (latest, end) = (offsetOf(p.sources.head.latestOffset), offsetOf(p.sources.head.endOffset))
        for ((key, at) <- end.positions; ShardPosition.After(seq, _) <- Some(at)) {
          val held = latest.get(key).collect { case ShardPosition.After(s, _) => BigInt(s) }
          assert(held.exists(_ >= BigInt(seq)), s"batch ${p.batchId}: latestOffset $latest behind its end $end")
        }
      }
    } finally query.stop()
  }

  /**
   * A query reading a new stream of `shards` with `options`, from its first trigger on (where the delay's clock
   * starts): `body` gets the stream, what the query wrote and the query.
   */
  private def afterFirstTrigger(prefix: String, shards: Int, options: (String, String)*)(
      body: (String, Collector, StreamingQuery) => Unit): Unit = {
    val stream = newStreamName(prefix)
    kinesis.createStream(stream, shards)
    val collector = new Collector
    val query = collector.start(kinesisReader(stream, options: _*), newCheckpoint(), Trigger.ProcessingTime(0))
    try {
      eventually("the query's first trigger") { query.recentProgress.nonEmpty }
      body(stream, collector, query)
    } finally query.stop()
  }

  test("minRecordsPerTrigger holds a batch back until enough records are ready") {
    afterFirstTrigger("min-records", 2, "minRecordsPerTrigger" -> "50", "maxTriggerDelay" -> "10min") {
      (stream, collector, query) =>
        val first = kinesis.putInOneRequest(stream, (1 to 20).map(i => s"key-${i % 4}" -> s"first-$i"))
        eventually("a trigger that saw the 20 records and ran no batch") { heldWithoutBatch(query, stream, first) }
        assert(collector.records.isEmpty, "a batch ran with fewer records than minRecordsPerTrigger")
        val rest = kinesis.putInOneRequest(stream, (1 to 40).map(i => s"key-${i % 4}" -> s"rest-$i"))
        eventually("the 60 records") { collector.records.size >= 60 }
        assertExactly(collector.records, first ++ rest)
        assert(collector.batchIds.distinct.size == 1, s"batches ${collector.batchIds}")
    }
  }

  test("maxTriggerDelay releases a batch smaller than minRecordsPerTrigger") {
    afterFirstTrigger("trigger-delay", 1, "minRecordsPerTrigger" -> "1000", "maxTriggerDelay" -> "8s") {
      (stream, collector, query) =>
        val few = kinesis.putInOneRequest(stream, (1 to 10).map(i => "key" -> s"few-$i"))
        eventually("a trigger that saw the 10 records and ran no batch") { heldWithoutBatch(query, stream, few) }
        eventually("the delay to release the batch", Duration.ofSeconds(30)) { collector.records.size >= few.size }
        assertExactly(collector.records, few)
    }
  }

  test("a batch that reads a shard to its end is never held back: its children would wait with it") {
    afterFirstTrigger("min-split", 1, "minRecordsPerTrigger" -> "1000", "maxTriggerDelay" -> "10min") {
      (stream, _, query) =>
        val parent = ShardKey(stream, "shardId-000000000000")
        kinesis.split(stream, parent.shardId)
        eventually("a batch that ends the parent") {
          query.recentProgress.exists(p => Option(p.sources.head.endOffset).exists(offsetOf(_).get(parent).contains(ShardPosition.ShardEnd)))
        }
    }
  }
}
