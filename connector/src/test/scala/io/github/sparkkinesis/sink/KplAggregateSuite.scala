package io.github.sparkkinesis.sink

import io.github.sparkkinesis.sink.executor.{KplAggregate, UserEntry}
import io.github.sparkkinesis.source.ShardKey
import io.github.sparkkinesis.source.executor.KplDeaggregator
import java.security.MessageDigest

import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.{CodedInputStream, WireFormat}
import org.scalatest.funsuite.AnyFunSuite

class KplAggregateSuite extends AnyFunSuite {
  private def entry(key: String, data: String, hashKey: String = null) = UserEntry(key, hashKey, data.getBytes("UTF-8"))

  private def pack(entries: Seq[UserEntry]): Array[Byte] = {
    val a = new KplAggregate
    entries.foreach(a.add)
    a.encode()
  }

  private def split(bytes: Array[Byte]) =
    KplDeaggregator.split(ShardKey("s", "shardId-000000000000"), "1", 0L, bytes)

  /** The explicit hash key of each record as the protobuf says (None when the record has no index). */
  private def hashKeys(bytes: Array[Byte]): Seq[Option[String]] = {
    val in = CodedInputStream.newInstance(bytes, 4, bytes.length - 20)
    val table = ArrayBuffer.empty[String]
    val indexes = ArrayBuffer.empty[Option[Long]]
    var tag = in.readTag()
    while (tag != 0) {
      WireFormat.getTagFieldNumber(tag) match {
        case 2 => table += in.readString()
        case 3 =>
          val limit = in.pushLimit(in.readRawVarint32())
          var index: Option[Long] = None
          var t = in.readTag()
          while (t != 0) {
            if (WireFormat.getTagFieldNumber(t) == 2) index = Some(in.readUInt64()) else in.skipField(t)
            t = in.readTag()
          }
          indexes += index
          in.popLimit(limit)
        case _ => in.skipField(tag)
      }
      tag = in.readTag()
    }
    indexes.map(_.map(i => table(i.toInt))).toSeq
  }

  test("an aggregate reads back through the source's de-aggregator: keys, data and order, with shared key tables") {
    val entries = (0 until 50).map(i => entry(s"user-${i % 7}", s"payload-$i")) :+ entry("ünïcødé", "x") :+
      entry("empty", "")
    val bytes = pack(entries)
    val records = split(bytes)
    assert(records.map(r => (r.partitionKey, new String(r.data, "UTF-8"))) ==
      entries.map(e => (e.partitionKey, new String(e.data, "UTF-8"))))
    assert(records.map(_.subSequenceNumber) == entries.indices.map(_.toLong))
    // Seven distinct keys and two more, each stored once: far smaller than 52 copies.
    assert(bytes.length < entries.map(e => e.data.length + 10).sum + 9 * 12)
  }

  test("explicit hash keys are kept per record; records without one carry no index") {
    val entries = Seq(entry("a", "1", "42"), entry("b", "2"), entry("c", "3", "42"), entry("d", "4", "7"))
    val bytes = pack(entries)
    assert(hashKeys(bytes) == Seq(Some("42"), None, Some("42"), Some("7")))
    assert(split(bytes).map(_.partitionKey) == Seq("a", "b", "c", "d"))
  }

  test("the size is exact before and after each record joins, across varint length steps") {
    val a = new KplAggregate
    assert(a.encodedSize == 20)
    val sizes = Seq(0, 1, 127, 128, 300, 16383, 16384, 70000)
    for ((n, i) <- sizes.zipWithIndex) {
      val e = UserEntry(s"key-${i % 3}", if (i % 2 == 0) null else s"${i * 1000}", Array.fill(n)('x'.toByte))
      val predicted = a.encodedSizeWith(e)
      if (a.isEmpty) assert(predicted == KplAggregate.encodedSizeAlone(e))
      a.add(e)
      assert(a.encodedSize == predicted)
      assert(a.encode().length == predicted, s"after a record of $n bytes")
    }
    // 130 keys: the key index needs two bytes from the 129th key on.
    val many = new KplAggregate
    (0 until 130).foreach { i =>
      val e = entry(s"k$i", "d")
      val predicted = many.encodedSizeWith(e)
      many.add(e)
      assert(many.encode().length == predicted)
    }
  }

  test("magic, then the MD5 of the protobuf body; a flipped byte fails the source's check") {
    val bytes = pack(Seq(entry("a", "1"), entry("b", "2")))
    assert(bytes.take(4).toSeq == Seq(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte))
    val body = bytes.slice(4, bytes.length - 16)
    assert(MessageDigest.getInstance("MD5").digest(body).toSeq == bytes.takeRight(16).toSeq)
    assert(KplDeaggregator.isAggregated(bytes))
    val corrupt = bytes.clone()
    corrupt(6) = (corrupt(6) ^ 1).toByte
    val error = intercept[IllegalArgumentException](split(corrupt))
    assert(error.getMessage.contains("not a well-formed KPL aggregate: NotAggregate"))
  }
}
