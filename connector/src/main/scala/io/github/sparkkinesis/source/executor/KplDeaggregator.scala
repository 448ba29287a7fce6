package io.github.sparkkinesis.source
package executor

import java.security.MessageDigest

import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.{CodedInputStream, WireFormat}

/**
 * Splits records written by the Kinesis Producer Library's aggregation into their user records. Format: the magic
 * bytes F3 89 9A C2, a protobuf `AggregatedRecord` (partition key table = 1, explicit hash key table = 2,
 * records = 3, each record: partition key index = 1, explicit hash key index = 2, data = 3, tags = 4), then the
 * MD5 of the protobuf bytes.
 *
 * Kinesis stores data intact, so a record that starts with the magic bytes but whose MD5 does not match, or whose
 * body does not parse, is not an aggregate: it is user data that begins with those four bytes (one in 2^32 records
 * of random binary data) and is read as one plain record, as the KCL reads it. One that verifies but whose contents
 * contradict themselves (an index outside its table, a record without data, no record at all) was written by a
 * faulty producer: read whole as one plain record too, and counted, so that no record can stop a query and none
 * is lost.
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

  /** What [[splitInto]] made of a record that starts with the magic bytes. */
  sealed trait Outcome
  /** Its user records were added. */
  case object Split extends Outcome
  /** Skipped whole: it holds a user record of another shard's hash keys. */
  case object Misplaced extends Outcome
  /** Not an aggregate (the digest does not match, or the body does not parse): the caller reads it as it is. */
  case object NotAggregate extends Outcome
  /** Verified, but its contents contradict themselves (`why`): the caller reads it whole, as it is. */
  final case class Malformed(why: String) extends Outcome

  /** Whether the record starts with the magic bytes and is long enough to end with a digest: worth a look. */
  def isAggregated(data: Array[Byte]): Boolean =
    data.length >= Magic.length + DigestLength &&
      data(0) == Magic(0) && data(1) == Magic(1) && data(2) == Magic(2) && data(3) == Magic(3)

  /**
   * The user records of an aggregate, sub-sequence numbers 0, 1, ... in order; fails on a record that is not a
   * well-formed aggregate (tools and tests, which check what a writer made; reads use splitInto).
   */
  def split(key: ShardKey, sequenceNumber: String, arrivalMillis: Long, data: Array[Byte]): IndexedSeq[UserRecord] = {
    val out = new RecordBlock.Builder(16, data.length)
    val outcome =
      if (isAggregated(data)) splitInto(out, key, sequenceNumber, arrivalMillis, data, ShardPosition.TrimHorizon, None)
      else NotAggregate
    require(outcome == Split, s"record $sequenceNumber of $key is not a well-formed KPL aggregate: $outcome")
    out.result().iterator.toIndexedSeq
  }

  /**
   * For a record that [[isAggregated]]: adds the user records of the aggregate that come after `position` to `out`,
   * payloads copied straight from the aggregate ([[Split]]); or adds none and says why not. `hashKeys`: the reading
   * shard's range, when known. Everything is checked before any record is added; the outcome depends on the bytes
   * and the range only, so every read of a record makes the same rows.
   */
  def splitInto(
      out: RecordBlock.Builder,
      key: ShardKey,
      sequenceNumber: String,
      arrivalMillis: Long,
      data: Array[Byte],
      position: ShardPosition,
      hashKeys: Option[HashKeySpan]): Outcome = {
    val bodyLength = data.length - Magic.length - DigestLength
    val md5 = Md5.get()
    md5.reset()
    md5.update(data, Magic.length, bodyLength)
    if (!MessageDigest.isEqual(md5.digest(), java.util.Arrays.copyOfRange(data, data.length - DigestLength, data.length))) {
      return NotAggregate
    }
    val keys = ArrayBuffer.empty[String]
    val explicitKeys = ArrayBuffer.empty[String]
    // Per user record: key index and explicit hash key index (-1: none) in `records`; payload offset and length
    // inside `data` in `payloads` (offset -1: the record has no data).
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
      case _: com.google.protobuf.InvalidProtocolBufferException => return NotAggregate
    }
    val malformed = inconsistency(records, payloads, keys, explicitKeys)
    if (malformed.isDefined) return malformed.get
    if (hashKeys.exists(range => !holdsAll(range, records, keys, explicitKeys))) return Misplaced
    val count = records.size / 2
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
    Split
  }

  /** What makes a verified aggregate's contents contradict themselves, if anything: the first such thing found. */
  private def inconsistency(
      records: ArrayBuffer[Long],
      payloads: ArrayBuffer[Int],
      keys: ArrayBuffer[String],
      explicitKeys: ArrayBuffer[String]): Option[Malformed] = {
    val count = records.size / 2
    if (count == 0) return Some(Malformed("it holds no user record"))
    // Per explicit hash key: 0 not checked yet, 1 a hash key, 2 not one.
    val explicitChecked = new Array[Byte](explicitKeys.size)
    var i = 0
    while (i < count) {
      val keyIndex = records(2 * i)
      val hashIndex = records(2 * i + 1)
      def unsigned(index: Long) = java.lang.Long.toUnsignedString(index)
      if (keyIndex == -1) return Some(Malformed(s"user record $i has no partition key index"))
      if (keyIndex < 0 || keyIndex >= keys.size) {
        return Some(Malformed(
          s"user record $i's partition key index ${unsigned(keyIndex)} is outside the table of ${keys.size}"))
      }
      if (hashIndex < -1 || hashIndex >= explicitKeys.size) {
        return Some(Malformed(
          s"user record $i's explicit hash key index ${unsigned(hashIndex)} is outside the table of ${explicitKeys.size}"))
      }
      if (hashIndex >= 0) {
        val h = hashIndex.toInt
        if (explicitChecked(h) == 0) explicitChecked(h) = if (HashKeySpan.isHashKey(explicitKeys(h))) 1 else 2
        if (explicitChecked(h) == 2) {
          return Some(Malformed(s"user record $i's explicit hash key is not a decimal in [0, 2^128)"))
        }
      }
      if (payloads(2 * i) < 0) return Some(Malformed(s"user record $i has no data"))
      i += 1
    }
    None
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
    records += keyIndex
    records += hashIndex
    payloads += offset
    payloads += length
  }
}
