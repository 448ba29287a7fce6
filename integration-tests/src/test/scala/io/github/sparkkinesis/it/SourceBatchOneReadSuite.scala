package io.github.sparkkinesis.it

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.KinesisBatch

/**
 * A batch read reads each record once (docs/design/offsets.md, "One read per record"): planned without reading
 * the data, its tasks read every record of the range once, which the simulator's counters show (bytes served by
 * GetRecords against bytes stored).
 */
class SourceBatchOneReadSuite extends AnyFunSuite with SimulatorSourceTest {
  override protected def simulatorOptions: Seq[String] = Seq("--quotas", "off")
  // Two attempts per task: a failure injected in the first is retried.
  override protected def master: String = "local[2, 2]"

  private def batchReader(stream: String, options: (String, String)*): DataFrame =
    spark.read.format("kinesis").options(Map(
      "streamName" -> stream, "endpoint" -> endpoint.toString, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey,
      "initialPosition" -> "trim_horizon") ++ options).load()

  private def collect(df: DataFrame): Seq[ReadRecord] = df.collect().toSeq.map { r =>
    ReadRecord(0, r.getAs[String]("partitionKey"), new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
      r.getAs[String]("shardId"), r.getAs[String]("sequenceNumber"), r.getAs[Long]("subSequenceNumber"))
  }

  /** Bytes the stream's shards served to GetRecords, and bytes they store. */
  private def servedAndStored(stream: String): (Long, Long) = {
    val shards = simulator.admin.counters().path("streams").path(stream).path("shards")
    val each = shards.fields().asScala.map(_.getValue).toSeq
    (each.map(_.path("getRecordsBytes").asLong()).sum, each.map(_.path("putBytes").asLong()).sum)
  }

  /** `n` records of `size` bytes per shard-spread key, put 100 to a request. */
  private def putLarge(stream: String, prefix: String, n: Int, size: Int): Seq[PutRecordResult] = {
    val payload = "x" * (size - 12)
    (1 to n).map(i => (s"key-${i % 16}", f"$prefix-$i%06d-$payload")).grouped(100)
      .flatMap(kinesis.putInOneRequest(stream, _)).toSeq
  }

  private def withPlanning[A](planning: String)(body: => A): A = {
    spark.conf.set(KinesisBatch.PlanningConf, planning)
    try body finally spark.conf.unset(KinesisBatch.PlanningConf)
  }

  test("a multi-shard read larger than fetchBufferSize is served once: GetRecords bytes <= 1.05 x bytes stored") {
    val stream = newStreamName("once")
    kinesis.createStream(stream, 4)
    val put = putLarge(stream, "r", 640, 16 * 1024) // 10 MiB over 4 shards, 2.5 times the buffer
    assertExactly(collect(batchReader(stream, "fetchBufferSize" -> "4m")), put)
    val (served, stored) = servedAndStored(stream)
    assert(served <= stored * 1.05, s"GetRecords served $served bytes for $stored stored (${served.toDouble / stored}x)")

    // The same read planned as before one-read planning (the bench's "today" row): what the test guards against.
    val again = newStreamName("twice")
    kinesis.createStream(again, 4)
    val twice = putLarge(again, "r", 640, 16 * 1024)
    withPlanning("snapshots")(assertExactly(collect(batchReader(again, "fetchBufferSize" -> "4m")), twice))
    val (servedBefore, storedBefore) = servedAndStored(again)
    assert(servedBefore > storedBefore * 1.3, s"snapshot planning served $servedBefore for $storedBefore stored")
  }

  test("a stream split during the data: every record once, a parent's records before its children's in its task") {
    val stream = newStreamName("once-split")
    kinesis.createStream(stream, 2)
    val parent = kinesis.shardIds(stream).sorted.head
    val before = kinesis.putAll(stream, (1 to 40).map(i => (s"key-${i % 8}", f"before-$i%03d")))
    kinesis.split(stream, parent)
    val after = kinesis.putAll(stream, (1 to 40).map(i => (s"key-${i % 8}", f"after-$i%03d")))
    val children = kinesis.shardIds(stream).toSet -- before.map(_.shardId)
    assert(children.size == 2, s"the split made two children: ${kinesis.shardIds(stream)}")
    val read = collect(batchReader(stream, "shardsPerTask" -> "1"))
    assertExactly(read, before ++ after)
    assertKeyOrder(read, before ++ after)
    val lastOfParent = read.lastIndexWhere(_.shardId == parent)
    for (child <- children) {
      val first = read.indexWhere(_.shardId == child)
      assert(first < 0 || first > lastOfParent, s"$child's records come before its parent's last ($first, $lastOfParent)")
    }
  }

  test("per-shard and timestamp ends stop exactly, without reading the shards to their tip") {
    val stream = newStreamName("once-ends")
    kinesis.createStream(stream, 2)
    val head = putLarge(stream, "head", 64, 16 * 1024)
    Wait.until("a millisecond to pass the last arrival") {
      System.currentTimeMillis() > kinesis.shardIds(stream).flatMap(kinesis.arrivalMillis(stream, _)).max
    }
    val end = System.currentTimeMillis()
    Wait.until("the clock to pass the end") { System.currentTimeMillis() > end }
    putLarge(stream, "tail", 1280, 16 * 1024) // 20 MiB after the end: ten seconds of a shard's quota each
    val (servedAtStart, _) = servedAndStored(stream)
    val bounded = collect(batchReader(stream, "endingPosition" -> "at_timestamp", "endingTimestamp" -> end.toString))
    assertExactly(bounded, head)
    val (servedByTime, _) = servedAndStored(stream)
    val headBytes = head.map(p => p.data.length + p.partitionKey.length).sum.toLong
    // Each shard's last call may pass its end by what a call asks for (about a second of its read quota).
    val slack = 2L * 3 * 1024 * 1024
    assert(servedByTime - servedAtStart <= headBytes + slack, s"served ${servedByTime - servedAtStart} for $headBytes")

    val Seq(a, b) = kinesis.shardIds(stream).sorted
    val (inA, inB) = (head.filter(_.shardId == a), head.filter(_.shardId == b))
    val ends = s"""{"$a": {"after_sequence_number": "${inA(4).sequenceNumber}"}, """ +
      s""""$b": {"at_sequence_number": "${inB(2).sequenceNumber}"}}"""
    assertExactly(collect(batchReader(stream, "endingPosition" -> ends)), inA.take(5) ++ inB.take(2))
    val (servedByShard, _) = servedAndStored(stream)
    assert(servedByShard - servedByTime <= 7L * 17 * 1024 + slack, s"served ${servedByShard - servedByTime}")
  }

  test("a task run again, or retried after a failure, reads the same rows in the same order; none put after the plan") {
    val stream = newStreamName("once-retry")
    kinesis.createStream(stream, 3)
    val put = (1 to 4500).map(i => (s"key-$i", s"v$i")).grouped(500).flatMap(kinesis.putInOneRequest(stream, _)).toSeq
    assert(put.groupBy(_.shardId).values.forall(_.size > 1000), "every shard holds more than a turn")
    // One task reads the three shards, in turns of 1,000 records (RangeFetch.TurnRecords).
    val df = batchReader(stream, "shardsPerTask" -> "3")
    val first = collect(df)
    assertExactly(first, put)
    assert(first.take(1000).map(_.shardId).distinct.size == 1 && first(1000).shardId != first(0).shardId,
      "the task did not take its ranges in turns of 1,000 records")
    kinesis.putAll(stream, (1 to 30).map(i => (s"key-$i", s"later-$i")))
    // The same DataFrame keeps its planned partitions: every task runs again, as a retried task would.
    assert(collect(df) == first, "a task run again read other rows")
    // A task failing halfway through its first attempt (its ranges read ahead, then dropped) is retried by Spark,
    // on a plan of its own (a new query: it holds the later records too), read once cleanly to compare.
    val rows = df.select("shardId", "sequenceNumber").rdd
    val clean = rows.map(r => (r.getString(0), r.getString(1))).collect().toSeq
    assert(clean.distinct.size == clean.size && clean.size == 4530, s"${clean.size} rows, each once")
    assert(rows.mapPartitions(FailFirstAttempt).collect().toSeq == clean, "the retried task read other rows")
    assert(FailFirstAttempt.failed.get() > 0, "no task failed: nothing was retried")
  }
}

/** Fails each task's first attempt at its 1,500th row, its ranges read ahead and in their second turns; a retry
  * reads them all. */
private object FailFirstAttempt
  extends (Iterator[org.apache.spark.sql.Row] => Iterator[(String, String)]) with Serializable {
  val failed = new java.util.concurrent.atomic.AtomicInteger()
  override def apply(rows: Iterator[org.apache.spark.sql.Row]): Iterator[(String, String)] = {
    val attempt = org.apache.spark.TaskContext.get().attemptNumber()
    rows.zipWithIndex.map { case (r, i) =>
      if (attempt == 0 && i == 1500) {
        failed.incrementAndGet()
        throw new IllegalStateException("injected: the first attempt fails")
      }
      (r.getString(0), r.getString(1))
    }
  }
}
