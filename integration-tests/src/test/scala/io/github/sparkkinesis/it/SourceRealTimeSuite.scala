package io.github.sparkkinesis.it

import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, ForeachWriter, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Real-time mode (`Trigger.RealTime`) against the simulator: rows leave while the batch runs, restarts replay only
 * the batch that was cut (the same records first), a split during a batch keeps parent-before-child, idle shards
 * stall nothing, enhanced fan-out works the same, and options that cannot apply are refused.
 */
class SourceRealTimeSuite extends AnyFunSuite with SimulatorSourceTest {

  // Short batches keep the suite quick; Spark's own floor is 5 s.
  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.streaming.realTimeMode.minBatchDuration" -> "1000")

  private def keyed(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 5}", f"$prefix-$i%03d"))

  /** Starts a real-time query writing every row, with its batch id and the time it was seen, to `sink`. */
  private def start(df: DataFrame, sink: RealTimeSink, checkpoint: String, batch: String = "3 seconds"): StreamingQuery =
    df.writeStream
      .option("checkpointLocation", checkpoint)
      .outputMode("update")
      .trigger(Trigger.RealTime(batch))
      .foreach(sink.writer)
      .start()

  private def completedBatches(q: StreamingQuery): Long = q.recentProgress.length.toLong

  test("rows leave while the batch runs: every record once, in shard order, idle shards stall nothing") {
    val stream = newStreamName("rtm")
    kinesis.createStream(stream, 3)
    val sink = RealTimeSink.create()
    val query = start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), sink, newCheckpoint(), "90 seconds")
    try {
      eventually("the query's tasks to run") { query.status.isTriggerActive }
      // One key only: one shard gets records, the other two stay idle.
      val first = kinesis.putAll(stream, Seq("solo" -> "first"))
      eventually("the first record inside the batch", Duration.ofSeconds(20)) { sink.records.nonEmpty }
      assert(completedBatches(query) == 0, "the record waited for the batch to end")
      val rest = kinesis.putAll(stream, keyed("more", 40))
      eventually("the rest, still inside the batch", Duration.ofSeconds(20)) { sink.records.size >= 41 }
      assert(completedBatches(query) == 0)
      assertExactly(sink.records, first ++ rest)
      assertKeyOrder(sink.records, first ++ rest)
      // Quiet shards keep their feeds through a long batch, beside a busy one ("solo": shard 1, read by the task
      // that reads shard 0 too) and with nothing to read at all: no new iterator after the executor's 30 s floor for
      // unused feeds, and records put then still arrive inside the batch.
      val iterators = simulator.admin.operationCounter("GetShardIterator", "calls")
      val started = System.nanoTime()
      val busy = Seq.newBuilder[PutRecordResult]
      eventually("the batch to run past the 30 s floor", Duration.ofSeconds(50)) {
        busy ++= kinesis.putAll(stream, Seq("solo" -> s"busy-${System.nanoTime()}"))
        System.nanoTime() - started > Duration.ofSeconds(35).toNanos
      }
      val late = busy.result() ++ kinesis.putAll(stream, keyed("late", 10))
      eventually("the late records, inside the batch", Duration.ofSeconds(20)) { sink.records.size >= 41 + late.size }
      assert(completedBatches(query) == 0)
      assert(simulator.admin.operationCounter("GetShardIterator", "calls") == iterators, "a feed was dropped and read again")
      assertExactly(sink.records, first ++ rest ++ late)
    } finally query.stop()
  }

  for ((mode, extra) <- Seq("polling" -> Nil, "enhanced fan-out" -> Seq("consumerMode" -> "efo"))) {
    test(s"$mode: batches end on time and the next goes on from there; a restart replays only the batch that was cut, same records first") {
      val stream = newStreamName("rtm-restart")
      kinesis.createStream(stream, 2)
      val checkpoint = newCheckpoint()
      val sink = RealTimeSink.create()
      val reader = kinesisReader(stream, ("initialPosition" -> "trim_horizon") +: extra: _*)
      def run[T](batch: String)(body: StreamingQuery => T): (T, Long) = {
        val query = start(reader, sink, checkpoint, batch)
        val result = try body(query) finally query.stop()
        (result, query.recentProgress.map(_.batchId).maxOption.getOrElse(-1L))
      }
      // Short batches that commit, then a long one stopped while it runs (cut), then short ones again.
      val (early, committedFirst) = run("1 second") { q =>
        val p = kinesis.putAll(stream, keyed("early", 30))
        eventually("two batches after the early records") { sink.records.size >= p.size && q.recentProgress.length >= 2 }
        p
      }
      val (mid, committedSecond) = run("60 seconds") { q =>
        eventually("the query's tasks to run") { q.status.isTriggerActive }
        val p = kinesis.putAll(stream, keyed("mid", 30))
        eventually("the records put mid-batch") { sink.records.size >= early.size + p.size }
        p
      }
      val committed = math.max(committedFirst, committedSecond)
      val beforeRestart = sink.records
      val cut = beforeRestart.filter(_.batchId > committed)
      assert(cut.map(_.data).toSet == mid.map(_.data).toSet, "the long batch was cut after reading the mid records")
      val (late, _) = run("1 second") { _ =>
        val p = kinesis.putAll(stream, keyed("late", 30))
        eventually("every record after the restart") { sink.records.map(_.sequenceNumber).toSet.size >= 90 }
        p
      }
      val all = sink.records
      val unique = all.distinctBy(r => (r.shardId, r.sequenceNumber))
      assertExactly(unique, early ++ mid ++ late)
      assertKeyOrder(unique, early ++ mid ++ late)
      // Records of committed batches never come again; the batch that was cut is read again from its start.
      val repeated = all.groupBy(r => (r.shardId, r.sequenceNumber)).values.filter(_.size > 1).flatten
      assert(repeated.nonEmpty && repeated.forall(_.batchId > committed), s"a committed batch's records were read again: ${repeated.take(3)}")
      // After the restart each shard starts with the cut batch's records, in the same order (enhanced fan-out may
      // read them in a later batch: a subscription can take longer than a 1 s batch to start after a restart).
      val afterRestart = all.drop(beforeRestart.size)
      for ((shard, rs) <- cut.groupBy(_.shardId)) {
        val firstRun = rs.map(_.sequenceNumber)
        assert(afterRestart.filter(_.shardId == shard).map(_.sequenceNumber).take(firstRun.size) == firstRun,
          s"the replayed batch read shard $shard differently")
      }
    }
  }

  test("a split during a batch: the parent to its end, then its children in the same batch, nothing lost or reordered") {
    val stream = newStreamName("rtm-split")
    kinesis.createStream(stream, 1)
    val sink = RealTimeSink.create()
    val query = start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), sink, newCheckpoint(), "60 seconds")
    try {
      val before = kinesis.putAll(stream, keyed("before", 40))
      eventually("the parent's records") { sink.records.size >= before.size }
      kinesis.split(stream, kinesis.shardIds(stream).head)
      val after = kinesis.putAll(stream, keyed("after", 40))
      eventually("the children's records, inside the batch", Duration.ofSeconds(30)) { sink.records.size >= before.size + after.size }
      assert(completedBatches(query) == 0, "the children waited for the next batch")
      assertChildrenAfterParents(sink.records, before ++ after)
    } finally query.stop()
  }

  test("a merge of shards read by two tasks: the child from the next batch, after both parents") {
    val stream = newStreamName("rtm-merge")
    kinesis.createStream(stream, 2)
    val sink = RealTimeSink.create()
    // Two tasks (local[2]), a shard each: neither task holds both parents.
    val query = start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), sink, newCheckpoint(), "2 seconds")
    try {
      val before = kinesis.putAll(stream, keyed("before", 40))
      eventually("the parents' records") { sink.records.size >= before.size }
      val Seq(a, b) = kinesis.shardIds(stream).sorted
      kinesis.merge(stream, a, b)
      val after = kinesis.putAll(stream, keyed("after", 40))
      eventually("the child's records") { sink.records.size >= before.size + after.size }
      assertChildrenAfterParents(sink.records, before ++ after)
    } finally query.stop()
  }

  /** Every record once, each key in order, and no child record before a parent's last. */
  private def assertChildrenAfterParents(read: Seq[ReadRecord], put: Seq[PutRecordResult]): Unit = {
    assertExactly(read, put)
    assertKeyOrder(read, put)
    val parents = put.take(40).map(_.shardId).toSet
    val lastOfParents = read.lastIndexWhere(r => parents(r.shardId))
    assert(read.indexWhere(r => !parents(r.shardId)) > lastOfParents, "a child's record came before a parent's end")
  }

  test("enhanced fan-out in real-time mode: pushed records leave while the batch runs, an idle shard beside a busy one") {
    val stream = newStreamName("rtm-efo")
    kinesis.createStream(stream, 2)
    val sink = RealTimeSink.create()
    val polls = simulator.admin.operationCounter("GetRecords", "calls")
    val query = start(kinesisReader(stream, "initialPosition" -> "trim_horizon", "consumerMode" -> "efo"), sink,
      newCheckpoint(), "30 seconds")
    try {
      eventually("the query's tasks to run") { query.status.isTriggerActive }
      // One shard first, the other idle: its quiet subscription holds nothing back.
      val first = kinesis.putAll(stream, Seq("solo" -> "first"))
      eventually("the first record inside the batch", Duration.ofSeconds(20)) { sink.records.nonEmpty }
      val put = first ++ kinesis.putAll(stream, keyed("efo", 30))
      eventually("the records, inside the batch", Duration.ofSeconds(20)) { sink.records.size >= put.size }
      assert(completedBatches(query) == 0)
      assertExactly(sink.records, put)
      assertKeyOrder(sink.records, put)
      assert(simulator.admin.operationCounter("GetRecords", "calls") == polls, "an enhanced fan-out query polled")
    } finally query.stop()
  }

  test("Kinesis to Kinesis in real-time mode (Spark's allowlist check off): a burst reaches the target inside the batch") {
    val (from, to) = (newStreamName("rtm-in"), newStreamName("rtm-out"))
    kinesis.createStream(from, 1)
    kinesis.createStream(to, 1)
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    // One request in flight at a time: the rest of the burst queues behind it and must go while the task waits.
    val query = try kinesisReader(from, "initialPosition" -> "trim_horizon").select("partitionKey", "data")
      .writeStream.format("kinesis").options(Map("streamName" -> to, "endpoint" -> endpoint.toString,
        "region" -> TestEnv.region, "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey,
        "maxInFlightRequests" -> "1"))
      .option("checkpointLocation", newCheckpoint()).outputMode("update").trigger(Trigger.RealTime("60 seconds")).start()
    finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
    try {
      eventually("the query's tasks to run") { query.status.isTriggerActive }
      val put = kinesis.putAll(from, keyed("copy", 30))
      eventually("the burst in the target stream, inside the batch", Duration.ofSeconds(30)) {
        StreamContents.read(kinesis.client, to).size >= put.size
      }
      assert(completedBatches(query) == 0, "the rows waited for the batch to end")
      assert(StreamContents.read(kinesis.client, to).map(r => r.partitionKey -> r.text) == put.map(p => p.partitionKey -> p.data))
    } finally query.stop()
  }

  for ((option, value) <- Seq("maxRecordsPerTrigger" -> "100", "minRecordsPerTrigger" -> "100", "maxTriggerDelay" -> "1min")) {
    test(s"admission control is refused in real-time mode, naming the option: $option") {
      val stream = newStreamName("rtm-limits")
      kinesis.createStream(stream, 1)
      val query = start(kinesisReader(stream, option -> value), RealTimeSink.create(), newCheckpoint())
      val failure = intercept[Exception](query.awaitTermination(Duration.ofSeconds(60).toMillis))
      val messages = Iterator.iterate[Throwable](failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")
      assert(messages.contains(s"'$option'") && messages.contains("real-time mode"), messages)
    }
  }
}

/** Rows a real-time query's foreach writer saw, in the order it saw them; tasks run in this JVM (local[2]). */
final class RealTimeSink private (id: String) {
  def records: Seq[ReadRecord] = RealTimeSink.rows(id).asScala.toSeq
  def writer: ForeachWriter[Row] = new RealTimeSink.Writer(id)
}

object RealTimeSink {
  private val byId = new java.util.concurrent.ConcurrentHashMap[String, ConcurrentLinkedQueue[ReadRecord]]()

  def create(): RealTimeSink = new RealTimeSink(java.util.UUID.randomUUID().toString)

  private def rows(id: String) = byId.computeIfAbsent(id, _ => new ConcurrentLinkedQueue[ReadRecord]())

  private final class Writer(id: String) extends ForeachWriter[Row] {
    private var batchId = -1L
    override def open(partitionId: Long, epochId: Long): Boolean = { batchId = epochId; true }
    override def process(r: Row): Unit =
      rows(id).add(ReadRecord(batchId, r.getAs[String]("partitionKey"), new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
        r.getAs[String]("shardId"), r.getAs[String]("sequenceNumber"), r.getAs[Long]("subSequenceNumber"),
        r.getAs[String]("stream")))
    override def close(errorOrNull: Throwable): Unit = ()
  }
}
