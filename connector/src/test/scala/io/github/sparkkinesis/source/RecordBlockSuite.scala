package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

import com.google.protobuf.CodedOutputStream
import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.executor.{KplDeaggregator, RecordBlock, UserRecord}

/** The compact form buffered records take: what goes in comes out, positions compare as numbers, views share. */
class RecordBlockSuite extends AnyFunSuite {
  private val key = ShardKey("s", "shardId-000000000000")

  private def block(records: (String, String, Long)*): RecordBlock =
    RecordBlock.of(records.map { case (k, seq, sub) => UserRecord(k, s"data-$k-$seq".getBytes(UTF_8), seq, sub, 7L) })

  test("keys (ASCII or not), payloads, sequence numbers and times come out as they went in") {
    val records = Seq(
      UserRecord("k1", Array[Byte](1, 2, 3), "49590338271490256608559692538361571095921575989136588898", 0, 11L),
      UserRecord("clé-ü-日本", Array.empty, "7", 3, 12L),
      UserRecord("", new Array[Byte](100000), "8", 0, 13L)
    )
    val b = RecordBlock.of(records)
    assert(b.size == 3)
    records.indices.foreach { i =>
      val (in, out) = (records(i), b.record(i))
      assert(
        out.partitionKey == in.partitionKey && out.data.sameElements(in.data) && out.sequenceNumber == in.sequenceNumber &&
          out.subSequenceNumber == in.subSequenceNumber && out.arrivalMillis == in.arrivalMillis,
        s"record $i"
      )
      assert(b.partitionKey(i).toString == in.partitionKey && b.sequenceNumberUtf8(i).toString == in.sequenceNumber)
      assert(b.recordBytes(i) == in.data.length + in.partitionKey.getBytes(UTF_8).length)
    }
  }

  test("a builder grows past a wrong guess of records and bytes") {
    val out = new RecordBlock.Builder(1, 4)
    (1 to 1000).foreach(i => out.add(s"key-$i", Array.fill[Byte](i % 50)(1), 0, i % 50, i.toString, 0, i.toLong))
    val b = out.result()
    assert(b.size == 1000 && b.keyString(999) == "key-1000" && b.data(999).length == 0 && b.sequenceNumber(998) == "999")
  }

  test("records compare with positions as numbers: length first, then digits, then sub-sequence number") {
    val b = block(("a", "9", 0), ("a", "10", 0), ("a", "10", 2), ("a", "11", 0))
    assert(b.compareTo(0, After("10", 0)) < 0, "9 before 10, not after it as strings would have it")
    assert(b.compareTo(1, After("10", 0)) == 0 && b.compareTo(2, After("10", 1)) > 0 && b.compareTo(
      3,
      After("10", 99)) > 0)
    assert(b.countAtOrBefore(After("10", 1)) == 2 && b.countAtOrBefore(After("8", 0)) == 0 && b.countAtOrBefore(After(
      "12",
      0)) == 4)
    assert(b.holds(After("10", 2)) && !b.holds(After("10", 1)))
    assert(b.countReaching(ShardEnd) == 4 && b.countReaching(TrimHorizon) == 0)
  }

  test("views share the arrays: take, drop and slice keep positions and heap shares consistent") {
    val b = block(("a", "1", 0), ("b", "2", 0), ("c", "3", 0), ("d", "4", 0))
    val tail = b.drop(1).take(2)
    assert(tail.size == 2 && tail.keyString(0) == "b" && tail.lastPosition.contains(After("3", 0)))
    assert(b.heapBytes(0, 4) == (0 until 4).map(b.heapBytes).sum && tail.heapBytes(0, 2) == b.heapBytes(1, 3))
    assert(b.slice(3, 99).size == 1 && b.slice(5, 9).isEmpty && RecordBlock.empty.lastPosition.isEmpty)
    assertThrows[IndexOutOfBoundsException](tail.keyString(2))
    val own = b.drop(3).compact()
    assert(
      own.record(0).partitionKey == "d" && own.lastPosition.contains(After("4", 0)) &&
        own.heapBytes(0, 1) == b.heapBytes(3, 4),
      "a compacted view holds its own records only"
    )
    assert(b.compact() eq b, "a whole block is already compact")
  }

  test("large payloads are adopted, not copied; small ones copied in; sizes, heap shares and views stay right") {
    val big = Array.tabulate[Byte](RecordBlock.AdoptMinBytes)(_.toByte)
    val out = new RecordBlock.Builder(1, 8)
    out.adopt("a", Array[Byte](1, 2), "1", 0, 1L)
    out.adopt("bb", big, "2", 0, 2L)
    (3 to 9).foreach(i => out.adopt("c", new Array[Byte](RecordBlock.AdoptMinBytes + i), i.toString, 0, i.toLong))
    val b = out.result()
    assert(b.size == 9 && (b.data(1) eq big), "a large payload is handed on as the array it came in")
    assert(!(b.data(0) eq b.data(0)) && b.data(0).sameElements(Array[Byte](1, 2)), "a small one is copied out")
    assert(
      b.recordBytes(1) == big.length + 2 && b.recordBytes(0) == 3 && b.data(8).length == RecordBlock.AdoptMinBytes + 9)
    assert(b.heapBytes(1) == big.length + 2 + 1 + RecordBlock.PerRecordBytes + RecordBlock.AdoptedOverheadBytes)
    assert(b.heapBytes(0, 9) == (0 until 9).map(b.heapBytes).sum && b.drop(2).heapBytes(0, 3) == b.heapBytes(2, 5))
    val own = b.slice(1, 4).compact()
    assert((own.data(0) eq big) && own.heapBytes(0, 3) == b.heapBytes(1, 4) && own.recordBytes(2) == b.recordBytes(3))
    assert(own.lastPosition.contains(After("4", 0)) && own.keyString(0) == "bb")
  }

  private def aggregate(keys: Seq[String], records: Seq[(Int, String)]): Array[Byte] = {
    val body = new java.io.ByteArrayOutputStream()
    val out = CodedOutputStream.newInstance(body)
    keys.foreach(k => out.writeString(1, k))
    records.foreach { case (keyIndex, data) =>
      val record = new java.io.ByteArrayOutputStream()
      val r = CodedOutputStream.newInstance(record)
      r.writeUInt64(1, keyIndex.toLong)
      r.writeByteArray(3, data.getBytes(UTF_8))
      r.flush()
      out.writeByteArray(3, record.toByteArray)
    }
    out.flush()
    val magic = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)
    magic ++ body.toByteArray ++ MessageDigest.getInstance("MD5").digest(body.toByteArray)
  }

  test("a KPL aggregate's user records land in the block, after a resume position only, payloads intact") {
    val agg = aggregate(Seq("p", "q"), Seq(0 -> "one", 1 -> "two", 0 -> "three"))
    assert(KplDeaggregator.isAggregated(agg))
    val all = new RecordBlock.Builder(1)
    KplDeaggregator.splitInto(all, key, "42", 5L, agg, TrimHorizon, None)
    val b = all.result()
    assert(b.iterator.map(r => (r.partitionKey, new String(r.data, UTF_8), r.subSequenceNumber)).toSeq ==
      Seq(("p", "one", 0L), ("q", "two", 1L), ("p", "three", 2L)))
    val rest = new RecordBlock.Builder(1)
    KplDeaggregator.splitInto(rest, key, "42", 5L, agg, After("42", 0), None)
    assert(rest.result().iterator.map(_.subSequenceNumber).toSeq == Seq(1L, 2L), "sub-record 0 was read already")
  }
}
