package io.github.sparkkinesis.source
package executor

import java.security.MessageDigest

import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.{CodedInputStream, WireFormat}

/**
 * Splits records written by the Kinesis Producer Library's aggregation into their user records. Format: the magic
 * bytes F3 89 9A C2, a protobuf `AggregatedRecord` (partition key table = 1, explicit hash key table = 2,
 * records = 3, each record: partition key index = 1, explicit hash key index = 2, data = 3, tags = 4), then the
 * MD5 of the protobuf bytes. A record that starts with the magic bytes but does not verify is an error: silently
 * passing it on as one opaque record would lose every user record inside it.
 *
 * An aggregate that holds a user record whose hash key is outside the reading shard's range is skipped whole, as
 * the KCL does: a writer packed it for a shard that split (or merged) before it was stored, and, seeing where it
 * was stored, sends its user records again to the shards that hold their keys (this connector's sink and the
 * KPL both do). Reading the misplaced copy as well would read those records twice, out of their key's order.
 */
object KplDeaggregator {
  private val Magic = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)
  private val DigestLength = 16
  /** `MessageDigest.getInstance` looks the algorithm up in the security providers each time: once per thread. */
  private val Md5 = ThreadLocal.withInitial[MessageDigest](() => MessageDigest.getInstance("MD5"))

  def isAggregated(data: Array[Byte]): Boolean =
    data.length >= Magic.length + DigestLength &&
      data(0) == Magic(0) && data(1) == Magic(1) && data(2) == Magic(2) && data(3) == Magic(3)

  /** The user records of an aggregate, sub-sequence numbers 0, 1, ... in order (tools and tests; reads use splitInto). */
  def split(key: ShardKey, sequenceNumber: String, arrivalMillis: Long, data: Array[Byte]): IndexedSeq[UserRecord] = {
    val out = new RecordBlock.Builder(16, data.length)
    splitInto(out, key, sequenceNumber, arrivalMillis, data, ShardPosition.TrimHorizon, None)
    out.result().iterator.toIndexedSeq
  }

  /**
   * Adds the user records of an aggregate that come after `position` to `out`, payloads copied straight from the
   * aggregate, and returns true; or returns false and adds none when `hashKeys` (the reading shard's range, when
   * known) does not hold every user record's hash key. Whether the aggregate is well formed is checked in full
   * before any of its records is added.
   */
  def splitInto(
      out: RecordBlock.Builder,
      key: ShardKey,
      sequenceNumber: String,
      arrivalMillis: Long,
      data: Array[Byte],
      position: ShardPosition,
      hashKeys: Option[HashKeySpan]): Boolean = {
    def corrupt(why: String) = new IllegalStateException(
      s"Corrupt KPL aggregated record in Kinesis shard $key at sequence number $sequenceNumber: $why")
    val bodyLength = data.length - Magic.length - DigestLength
    val md5 = Md5.get()
    md5.reset()
    md5.update(data, Magic.length, bodyLength)
    if (!MessageDigest.isEqual(md5.digest(), java.util.Arrays.copyOfRange(data, data.length - DigestLength, data.length))) {
      throw corrupt("the MD5 checksum does not match")
    }
    val keys = ArrayBuffer.empty[String]
    val explicitKeys = ArrayBuffer.empty[String]
    // Per user record: key index and explicit hash key index (-1: none) in `records`; payload offset and length
    // inside `data` in `payloads`.
    val records = ArrayBuffer.empty[Long]
    val payloads = ArrayBuffer.empty[Int]
    try {
      val in = CodedInputStream.newInstance(data, Magic.length, bodyLength)
      var tag = in.readTag()
      while (tag != 0) {
        WireFormat.getTagFieldNumber(tag) match {
          case 1 => keys += in.readString()
          case 2 => explicitKeys += in.readString()
          case 3 =>
            val limit = in.pushLimit(in.readRawVarint32())
            readRecord(in, records, payloads)
            in.popLimit(limit)
          case _ => in.skipField(tag)
        }
        tag = in.readTag()
      }
    } catch {
      case e: com.google.protobuf.InvalidProtocolBufferException => throw corrupt(e.getMessage)
    }
    val count = records.size / 2
    var i = 0
    while (i < count) {
      val keyIndex = records(2 * i)
      val hashIndex = records(2 * i + 1)
      if (keyIndex < 0 || keyIndex >= keys.size) throw corrupt(s"partition key index $keyIndex out of ${keys.size}")
      if (hashIndex < -1 || hashIndex >= explicitKeys.size) {
        throw corrupt(s"explicit hash key index $hashIndex out of ${explicitKeys.size}")
      }
      i += 1
    }
    if (hashKeys.exists(range => !holdsAll(range, records, keys, explicitKeys))) return false
    var sub = 0
    while (sub < count) {
      if (SequenceNumbers.isAfter(position, sequenceNumber, sub.toLong)) {
        out.add(
          keys(records(2 * sub).toInt),
          data,
          payloads(2 * sub),
          payloads(2 * sub + 1),
          sequenceNumber,
          sub.toLong,
          arrivalMillis)
      }
      sub += 1
    }
    true
  }

  /** Whether `range` holds every user record's hash key; each distinct key is hashed once. */
  private def holdsAll(
      range: HashKeySpan,
      records: ArrayBuffer[Long],
      keys: ArrayBuffer[String],
      explicitKeys: ArrayBuffer[String]): Boolean = {
    // Per key table entry: 0 not checked yet, 1 inside, 2 outside.
    val byKey = new Array[Byte](keys.size)
    val byExplicit = new Array[Byte](explicitKeys.size)
    def check(memo: Array[Byte], i: Int, inside: => Boolean): Boolean = {
      if (memo(i) == 0) memo(i) = if (inside) 1 else 2
      memo(i) == 1
    }
    var r = 0
    val count = records.size / 2
    while (r < count) {
      val hashIndex = records(2 * r + 1).toInt
      val inside =
        if (hashIndex >= 0) check(byExplicit, hashIndex, range.containsExplicit(explicitKeys(hashIndex)))
        else { val k = records(2 * r).toInt; check(byKey, k, range.containsPartitionKey(keys(k))) }
      if (!inside) return false
      r += 1
    }
    true
  }

  /**
   * One user record: its key index and explicit hash key index (-1 when it has none) go to `records`, its
   * payload's offset in the aggregate and length to `payloads`.
   */
  private def readRecord(in: CodedInputStream, records: ArrayBuffer[Long], payloads: ArrayBuffer[Int]): Unit = {
    var keyIndex = -1L
    var hashIndex = -1L
    var offset = -1
    var length = 0
    var tag = in.readTag()
    while (tag != 0) {
      WireFormat.getTagFieldNumber(tag) match {
        case 1 => keyIndex = in.readUInt64()
        case 2 => hashIndex = in.readUInt64()
        case 3 =>
          length = in.readRawVarint32()
          offset = Magic.length + in.getTotalBytesRead
          in.skipRawBytes(length)
        case _ => in.skipField(tag)
      }
      tag = in.readTag()
    }
    if (offset < 0) throw new com.google.protobuf.InvalidProtocolBufferException("a user record has no data")
    records += keyIndex
    records += hashIndex
    payloads += offset
    payloads += length
  }
}
