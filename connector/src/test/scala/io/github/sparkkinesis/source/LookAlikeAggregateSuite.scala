package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.time.Instant

import com.google.protobuf.CodedOutputStream
import io.github.sparkkinesis.source.ShardPosition._
import io.github.sparkkinesis.source.executor.{KplDeaggregator, Poll, RecordBlock, ShardReader}
import io.github.sparkkinesis.source.executor.KplDeaggregator.{Malformed, NotAggregate, Split}
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.Record

/**
 * Records that start with the KPL magic bytes but are not aggregates one can split (SPEC §2, as the KCL reads
 * them): each comes out as one plain record with its data as stored; none fails the read, none vanishes.
 */
class LookAlikeAggregateSuite extends AnyFunSuite {
  private val key = ShardKey("s", "shardId-000000000000")
  private val magic = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)

  /** A user record as written into an aggregate; None leaves the field out. */
  private case class Entry(keyIndex: Option[Long], hashIndex: Option[Long], data: Option[String])
  private def entry(keyIndex: Long, data: String) = Entry(Some(keyIndex), None, Some(data))

  private def body(keys: Seq[String], hashKeys: Seq[String], entries: Seq[Entry]): Array[Byte] = {
    val bytes = new java.io.ByteArrayOutputStream()
    val out = CodedOutputStream.newInstance(bytes)
    keys.foreach(out.writeString(1, _))
    hashKeys.foreach(out.writeString(2, _))
    entries.foreach { e =>
      val record = new java.io.ByteArrayOutputStream()
      val r = CodedOutputStream.newInstance(record)
      e.keyIndex.foreach(r.writeUInt64(1, _))
      e.hashIndex.foreach(r.writeUInt64(2, _))
      e.data.foreach(d => r.writeByteArray(3, d.getBytes(UTF_8)))
      r.flush()
      out.writeByteArray(3, record.toByteArray)
    }
    out.flush()
    bytes.toByteArray
  }
  private def sealedWith(body: Array[Byte], digest: Array[Byte]): Array[Byte] = magic ++ body ++ digest
  private def sealedRight(body: Array[Byte]): Array[Byte] =
    sealedWith(body, MessageDigest.getInstance("MD5").digest(body))
  private def aggregate(keys: Seq[String], entries: Entry*): Array[Byte] = sealedRight(body(keys, Nil, entries))

  private def outcome(data: Array[Byte]): KplDeaggregator.Outcome = {
    assert(KplDeaggregator.isAggregated(data))
    val out = new RecordBlock.Builder(1)
    val o = KplDeaggregator.splitInto(out, key, "42", 5L, data, TrimHorizon, Some(HashKeySpan.All))
    assert(o == Split || out.size == 0, "a record not split adds nothing itself")
    o
  }

  private def record(seq: String, data: Array[Byte]) = Record.builder().sequenceNumber(seq).partitionKey("pk")
    .data(SdkBytes.fromByteArray(data)).approximateArrivalTimestamp(Instant.ofEpochMilli(9L)).build()
  private def decode(position: ShardPosition, records: Record*): Poll =
    ShardReader.decode(key, position, java.util.Arrays.asList(records: _*), 0L, ended = false, filled = false, None)

  private val good = aggregate(Seq("p", "q"), entry(0, "one"), entry(1, "two"))

  test("a well-formed aggregate is split") {
    assert(outcome(good) == Split)
  }

  test("not an aggregate: a digest that does not match, or a body that does not parse") {
    val wrongDigest = sealedWith(body(Seq("p"), Nil, Seq(entry(0, "one"))), new Array[Byte](16))
    assert(outcome(wrongDigest) == NotAggregate)
    val cut = body(Seq("p"), Nil, Seq(entry(0, "one"))).dropRight(2)
    assert(outcome(sealedRight(cut)) == NotAggregate, "a protobuf that ends inside a field")
    assert(outcome(magic ++ Array.fill[Byte](16)(7)) == NotAggregate, "magic and 16 bytes that digest nothing")
  }

  test("verified but inconsistent: each case says what is wrong") {
    def why(data: Array[Byte]): String = outcome(data) match {
      case Malformed(w) => w
      case other => fail(s"expected Malformed, got $other")
    }
    assert(why(sealedRight(Array.empty)) == "it holds no user record", "only the magic and the digest of nothing")
    assert(why(aggregate(Seq("p"))) == "it holds no user record", "a key table and no record")
    assert(why(aggregate(Seq("p"), entry(0, "one"), entry(3, "x"))) == "user record 1's partition key index 3 is " +
      "outside the table of 1")
    assert(why(aggregate(Seq("p"), Entry(None, None, Some("x")))) == "user record 0 has no partition key index")
    assert(why(aggregate(Seq("p"), Entry(Some(0), Some(0), Some("x")))) == "user record 0's explicit hash key index " +
      "0 is outside the table of 0")
    assert(why(aggregate(Seq("p"), Entry(Some(0), None, None))) == "user record 0 has no data")
    for (bad <- Seq("", "-1", "12a", (BigInt(1) << 128).toString)) {
      val data = sealedRight(body(Seq("p"), Seq(bad), Seq(Entry(Some(0), Some(0), Some("x")))))
      assert(why(data) == "user record 0's explicit hash key is not a decimal in [0, 2^128)", bad)
    }
    val highest =
      sealedRight(body(Seq("p"), Seq(HashKeySpan.MaxHashKey.toString), Seq(Entry(Some(0), Some(0), Some("x")))))
    assert(outcome(highest) == Split, "2^128-1 is a hash key")
  }

  test("a read returns each look-alike whole as one plain record, marks the malformed ones, and counts them") {
    val wrongDigest = sealedWith(body(Seq("p"), Nil, Seq(entry(0, "one"))), new Array[Byte](16))
    val empty = sealedRight(Array.empty)
    val badIndex = aggregate(Seq("p"), entry(2, "x"))
    val poll = decode(
      TrimHorizon,
      record("1", wrongDigest),
      record("2", good),
      record("3", empty),
      record("4", badIndex),
      record("5", "plain".getBytes(UTF_8)))
    val rows =
      poll.records.iterator.map(r => (r.sequenceNumber, r.subSequenceNumber, r.partitionKey, r.data.toSeq)).toSeq
    assert(
      rows == Seq(
        ("1", 0L, "pk", wrongDigest.toSeq),
        ("2", 0L, "p", "one".getBytes(UTF_8).toSeq),
        ("2", 1L, "q", "two".getBytes(UTF_8).toSeq),
        ("3", 0L, "pk", empty.toSeq),
        ("4", 0L, "pk", badIndex.toSeq),
        ("5", 0L, "pk", "plain".getBytes(UTF_8).toSeq)
      ))
    assert(poll.aggregates == AggregateCounts(misplaced = 0, malformed = 2))
    assert((0 until poll.records.size).filter(poll.records.isMalformedAggregate) == Seq(3, 4))
    val view = poll.records.slice(2, 5)
    assert((0 until view.size).filter(view.isMalformedAggregate) == Seq(1, 2), "a view keeps the marks")
    val own = poll.records.slice(4, 6).compact()
    assert((0 until own.size).filter(own.isMalformedAggregate) == Seq(0), "so does a compacted copy")
  }

  test("a resume after a look-alike does not read it again; a resume before it does") {
    val records = Seq(record("3", sealedRight(Array.empty)), record("4", magic ++ new Array[Byte](20)))
    assert(decode(After("3", 0), records: _*).records.iterator.map(_.sequenceNumber).toSeq == Seq("4"))
    assert(decode(After("2", Long.MaxValue), records: _*).records.iterator.map(_.sequenceNumber).toSeq == Seq("3", "4"))
  }

  test("the marks of a block built without look-alikes cost nothing and say no") {
    val b = RecordBlock.of(Seq(executor.UserRecord("k", Array[Byte](1), "1", 0, 0L)))
    assert(!b.isMalformedAggregate(0))
  }
}
