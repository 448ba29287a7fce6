package io.github.sparkkinesis.it

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** Splits and merges while a query runs: every record once, and every key's records in the order they were put. */
class SourceReshardingSuite extends AnyFunSuite with SourceTest {

  private def keyed(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 5}", f"$prefix-$i%03d"))

  /** A running query over `stream` from its trim horizon, collecting what it reads. */
  private def reading(stream: String): (Collector, StreamingQuery) = {
    val collector = new Collector
    (collector, collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), newCheckpoint(),
      Trigger.ProcessingTime(100)))
  }

  test("a split while the query runs: parent read to its end, children after it, order per key kept") {
    val stream = newStreamName("split")
    kinesis.createStream(stream, 1)
    val parent = kinesis.shardIds(stream).head
    val (collector, query) = reading(stream)
    try {
      val before = kinesis.putAll(stream, keyed("before", 30))
      eventually("the records before the split to be read") { collector.records.size >= before.size }
      kinesis.split(stream, parent)
      val after = kinesis.putAll(stream, keyed("after", 40))
      assert(after.forall(_.shardId != parent), "records after the split go to the children")
      eventually("the records after the split to be read") { collector.records.size >= before.size + after.size }
      query.processAllAvailable()
      val read = collector.records
      assertExactly(read, before ++ after)
      assertKeyOrder(read, before ++ after)
      val lastParentBatch = read.filter(_.shardId == parent).map(_.batchId).max
      assert(read.filter(_.shardId != parent).forall(_.batchId > lastParentBatch), "a child was read before its parent ended")
    } finally query.stop()
  }

  test("a merge while the query runs: both parents before the child") {
    val stream = newStreamName("merge")
    kinesis.createStream(stream, 2)
    val Seq(a, b) = kinesis.shardIds(stream).sorted
    val (collector, query) = reading(stream)
    try {
      val before = kinesis.putAll(stream, keyed("before", 30))
      eventually("the records before the merge to be read") { collector.records.size >= before.size }
      kinesis.merge(stream, a, b)
      val after = kinesis.putAll(stream, keyed("after", 30))
      eventually("the records after the merge to be read") { collector.records.size >= before.size + after.size }
      query.processAllAvailable()
      val read = collector.records
      assertExactly(read, before ++ after)
      assertKeyOrder(read, before ++ after)
      val lastParentBatch = read.filter(r => r.shardId == a || r.shardId == b).map(_.batchId).max
      assert(read.filter(r => r.shardId != a && r.shardId != b).forall(_.batchId > lastParentBatch))
    } finally query.stop()
  }

  test("a stream resharded before the query started is read parents first") {
    val stream = newStreamName("presplit")
    kinesis.createStream(stream, 1)
    val parent = kinesis.shardIds(stream).head
    val before = kinesis.putAll(stream, keyed("before", 20))
    kinesis.split(stream, parent)
    val after = kinesis.putAll(stream, keyed("after", 20))
    val read = readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon")).records
    assertExactly(read, before ++ after)
    assertKeyOrder(read, before ++ after)
  }
}
