package io.github.sparkkinesis.sink
package executor

import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.util

import com.google.protobuf.{CodedOutputStream, WireFormat}

/**
 * One KPL aggregate being packed: the bytes readers split again (see `source.KplDeaggregator` for the format).
 * Its size is kept exact as records join, so a caller can ask what the next record would cost before adding it
 * and never has to encode twice.
 *
 * A record without an explicit hash key carries no index at all (the field is optional); explicit hash keys and
 * partition keys each appear once in their table however many records share them.
 */
final class KplAggregate {
  import KplAggregate._

  private val keyIndex = new util.HashMap[String, Integer]()
  private val keys = new util.ArrayList[Array[Byte]]()
  private val hashKeyIndex = new util.HashMap[String, Integer]()
  private val hashKeys = new util.ArrayList[Array[Byte]]()
  private val records = new util.ArrayList[UserEntry]()
  private val recordKeys = new util.ArrayList[Array[Int]]()
  private var bodyBytes = 0

  def count: Int = records.size
  def isEmpty: Boolean = records.isEmpty

  /** True when some record packed so far has this partition key. */
  def holdsKey(partitionKey: String): Boolean = keyIndex.containsKey(partitionKey)

  /** The user records packed so far, in order. */
  def entries: util.List[UserEntry] = records

  /** Bytes of the encoded aggregate: magic, protobuf body, MD5. */
  def encodedSize: Int = Overhead + bodyBytes

  /** What [[encodedSize]] would be with `r` added. */
  def encodedSizeWith(r: UserEntry): Int = Overhead + bodyBytes + growth(r)

  def add(r: UserEntry): Unit = {
    val grow = growth(r)
    val k = indexOf(keyIndex, keys, r.partitionKey)
    val h = if (r.explicitHashKey == null) -1 else indexOf(hashKeyIndex, hashKeys, r.explicitHashKey)
    records.add(r)
    recordKeys.add(Array(k, h))
    bodyBytes += grow
  }

  def encode(): Array[Byte] = {
    val out = new Array[Byte](encodedSize)
    System.arraycopy(Magic, 0, out, 0, Magic.length)
    val body = CodedOutputStream.newInstance(out, Magic.length, bodyBytes)
    keys.forEach(k => body.writeByteArray(1, k))
    hashKeys.forEach(h => body.writeByteArray(2, h))
    var i = 0
    while (i < records.size) {
      val r = records.get(i)
      val k = recordKeys.get(i)(0)
      val h = recordKeys.get(i)(1)
      body.writeTag(3, WireFormat.WIRETYPE_LENGTH_DELIMITED)
      body.writeUInt32NoTag(recordSize(k, h, r.data.length))
      body.writeUInt64(1, k)
      if (h >= 0) body.writeUInt64(2, h)
      body.writeByteArray(3, r.data)
      i += 1
    }
    body.checkNoSpaceLeft()
    val md5 = MessageDigest.getInstance("MD5")
    md5.update(out, Magic.length, bodyBytes)
    System.arraycopy(md5.digest(), 0, out, Magic.length + bodyBytes, DigestLength)
    out
  }

  /** Body bytes `r` adds: its record, and its keys where the tables do not hold them yet. */
  private def growth(r: UserEntry): Int = {
    var grow = 0
    val k = keyIndex.get(r.partitionKey)
    val kIndex = if (k == null) { grow += tableEntry(r.keyBytes); keys.size }
    else k.intValue
    val hIndex =
      if (r.explicitHashKey == null) -1
      else {
        val h = hashKeyIndex.get(r.explicitHashKey)
        if (h == null) { grow += tableEntry(r.explicitHashKey.length); hashKeys.size }
        else h.intValue
      }
    grow + tableEntry(recordSize(kIndex, hIndex, r.data.length))
  }

  private def indexOf(index: util.HashMap[String, Integer], table: util.ArrayList[Array[Byte]], s: String): Int = {
    val known = index.get(s)
    if (known != null) known.intValue
    else {
      index.put(s, table.size)
      table.add(s.getBytes(StandardCharsets.UTF_8))
      table.size - 1
    }
  }
}

object KplAggregate {
  val Magic: Array[Byte] = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)
  val DigestLength = 16
  /** Magic and MD5: what an aggregate costs beyond its protobuf body. */
  val Overhead: Int = Magic.length + DigestLength

  /** A length-delimited field (tag 1, 2 or 3: one byte) of `length` bytes. */
  private def tableEntry(length: Int): Int = 1 + CodedOutputStream.computeUInt32SizeNoTag(length) + length

  private def recordSize(keyIndex: Int, hashKeyIndex: Int, dataLength: Int): Int =
    1 + CodedOutputStream.computeUInt64SizeNoTag(keyIndex) +
      (if (hashKeyIndex >= 0) 1 + CodedOutputStream.computeUInt64SizeNoTag(hashKeyIndex) else 0) +
      tableEntry(dataLength)

  /** [[KplAggregate.encodedSize]] of an aggregate holding `r` alone. */
  def encodedSizeAlone(r: UserEntry): Int =
    Overhead + tableEntry(r.keyBytes) +
      (if (r.explicitHashKey == null) 0 else tableEntry(r.explicitHashKey.length)) +
      tableEntry(recordSize(0, if (r.explicitHashKey == null) -1 else 0, r.data.length))
}

/**
 * One user record as the sink took it, before it is packed or sent alone.
 *
 * @param explicitHashKey null when Kinesis routes the record by its partition key
 * @param size data plus partition key in bytes, what Kinesis counts for a record sent alone
 */
final class UserEntry(val partitionKey: String, val explicitHashKey: String, val data: Array[Byte], val size: Int) {
  /** The partition key's UTF-8 length. */
  def keyBytes: Int = size - data.length
}

object UserEntry {
  def apply(partitionKey: String, explicitHashKey: String, data: Array[Byte]): UserEntry =
    new UserEntry(
      partitionKey,
      explicitHashKey,
      data,
      data.length + partitionKey.getBytes(StandardCharsets.UTF_8).length)
}
