package io.github.sparkkinesis.sink

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry
import io.github.sparkkinesis.sink.executor.{PendingRecord, RecordBatcher}

class RecordBatcherSuite extends AnyFunSuite {
  private def record(key: String, size: Int, tag: String = ""): PendingRecord = {
    val data = s"$key$tag".getBytes("UTF-8")
    new PendingRecord(
      PutRecordsRequestEntry.builder().partitionKey(key).data(SdkBytes.fromByteArray(data)).build(),
      key,
      size)
  }

  private def keysOf(batch: java.util.List[PendingRecord]) = batch.asScala.map(_.entry.data().asUtf8String()).toSeq

  test("a request takes records from the head, in order, up to the record cap") {
    val b = new RecordBatcher(distinctKeys = false)
    (1 to 1200).foreach(i => b.add(record(s"k$i", 10)))
    assert(b.take(500, Long.MaxValue).size == 500)
    assert(keysOf(b.take(500, Long.MaxValue)).head == "k501")
    assert(b.take(500, Long.MaxValue).size == 200)
    assert(b.isEmpty)
  }

  test("a request stops before the record that would pass the byte cap") {
    val b = new RecordBatcher(distinctKeys = false)
    Seq(400, 400, 300, 10).zipWithIndex.foreach { case (size, i) => b.add(record(s"k$i", size)) }
    assert(keysOf(b.take(500, 1000)) == Seq("k0", "k1"), "400 + 400 fit in 1000 bytes, + 300 does not")
    assert(keysOf(b.take(500, 1000)) == Seq("k2", "k3"))
  }

  test("a byte cap exactly reached is allowed; the first record always goes") {
    val b = new RecordBatcher(distinctKeys = false)
    b.add(record("a", 600)); b.add(record("b", 400)); b.add(record("c", 1))
    assert(keysOf(b.take(500, 1000)) == Seq("a", "b"))
    val big = new RecordBatcher(distinctKeys = false)
    big.add(record("huge", 5000))
    assert(big.take(500, 1000).size == 1, "a lane with records never yields an empty request")
  }

  test("failed records go back in front of everything queued, in their order") {
    val b = new RecordBatcher(distinctKeys = false)
    (1 to 6).foreach(i => b.add(record(s"k$i", 1)))
    val first = b.take(3, Long.MaxValue)
    b.requeueFirst(java.util.List.of(first.get(0), first.get(2)))
    assert(keysOf(b.take(10, Long.MaxValue)) == Seq("k1", "k3", "k4", "k5", "k6"))
  }

  test("preserveKeyOrder: one record per key per request, later records of a key wait in order") {
    val b = new RecordBatcher(distinctKeys = true)
    Seq("a" -> "1", "a" -> "2", "b" -> "1", "a" -> "3", "c" -> "1", "b" -> "2").foreach { case (k, t) =>
      b.add(record(k, 1, t))
    }
    assert(keysOf(b.take(10, Long.MaxValue)) == Seq("a1", "b1", "c1"))
    assert(keysOf(b.take(10, Long.MaxValue)) == Seq("a2", "b2"))
    assert(keysOf(b.take(10, Long.MaxValue)) == Seq("a3"))
    assert(b.isEmpty)
  }

  test("preserveKeyOrder: a resent record goes before the later records of its key") {
    val b = new RecordBatcher(distinctKeys = true)
    Seq("a" -> "1", "a" -> "2", "b" -> "1").foreach { case (k, t) => b.add(record(k, 1, t)) }
    val sent = b.take(10, Long.MaxValue)
    assert(keysOf(sent) == Seq("a1", "b1"))
    b.requeueFirst(java.util.Collections.singletonList(sent.get(0)))
    assert(keysOf(b.take(10, Long.MaxValue)) == Seq("a1"), "a2 must not overtake the resent a1")
    assert(keysOf(b.take(10, Long.MaxValue)) == Seq("a2"))
  }

  test("preserveKeyOrder: the byte cap ends a request without reordering what stays") {
    val b = new RecordBatcher(distinctKeys = true)
    Seq(("a", 1, "1"), ("a", 1, "2"), ("b", 900, "1"), ("c", 200, "1")).foreach { case (k, s, t) =>
      b.add(record(k, s, t))
    }
    assert(keysOf(b.take(10, 1000)) == Seq("a1", "b1"))
    assert(keysOf(b.take(10, 1000)) == Seq("a2", "c1"))
  }

  test("preserveKeyOrder: a hot key's backlog is scanned only a bounded distance") {
    val b = new RecordBatcher(distinctKeys = true)
    (1 to 10000).foreach(i => b.add(record("hot", 1, i.toString)))
    b.add(record("cold", 1, "1"))
    assert(keysOf(b.take(5, Long.MaxValue)) == Seq("hot1"), "the cold key sits past the scan bound")
    assert(b.size == 10000)
    assert(keysOf(b.take(5, Long.MaxValue)) == Seq("hot2"))
  }
}
