package io.github.sparkkinesis.source

import java.security.MessageDigest

import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.{CodedInputStream, WireFormat}

/**
 * Splits records written by the Kinesis Producer Library's aggregation into their user records. Format: the magic
 * bytes F3 89 9A C2, a protobuf `AggregatedRecord` (partition key table = 1, explicit hash key table = 2,
 * records = 3, each record: partition key index = 1, explicit hash key index = 2, data = 3, tags = 4), then the
 * MD5 of the protobuf bytes. A record that starts with the magic bytes but does not verify is an error: silently
 * passing it on as one opaque record would lose every user record inside it.
 */
object KplDeaggregator {
  private val Magic = Array(0xF3, 0x89, 0x9A, 0xC2).map(_.toByte)
  private val DigestLength = 16
  /** `MessageDigest.getInstance` looks the algorithm up in the security providers each time: once per thread. */
  private val Md5 = ThreadLocal.withInitial[MessageDigest](() => MessageDigest.getInstance("MD5"))

  def isAggregated(data: Array[Byte]): Boolean =
    data.length >= Magic.length + DigestLength &&
      data(0) == Magic(0) && data(1) == Magic(1) && data(2) == Magic(2) && data(3) == Magic(3)

  /** The user records of an aggregate, sub-sequence numbers 0, 1, ... in order (tools and tests; reads use splitInto). */
  def split(key: ShardKey, sequenceNumber: String, arrivalMillis: Long, data: Array[Byte]): IndexedSeq[UserRecord] = {
    val out = new RecordBlock.Builder(16, data.length)
    splitInto(out, key, sequenceNumber, arrivalMillis, data, ShardPosition.TrimHorizon)
    out.result().iterator.toIndexedSeq
  }

  /**
   * Adds the user records of an aggregate that come after `position` to `out`, payloads copied straight from the
   * aggregate. Whether the aggregate is well formed is checked in full before any of its records is added.
   */
  def splitInto(out: RecordBlock.Builder, key: ShardKey, sequenceNumber: String, arrivalMillis: Long,
      data: Array[Byte], position: ShardPosition): Unit = {
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
    // Per user record: key index, payload offset and length inside `data`.
    val records = ArrayBuffer.empty[Long]
    val payloads = ArrayBuffer.empty[Int]
    try {
      val in = CodedInputStream.newInstance(data, Magic.length, bodyLength)
      var tag = in.readTag()
      while (tag != 0) {
        WireFormat.getTagFieldNumber(tag) match {
          case 1 => keys += in.readString()
          case 3 =>
            val limit = in.pushLimit(in.readRawVarint32())
            readRecord(in, records, payloads)
            in.popLimit(limit)
          case _ => in.skipField(tag) // explicit hash keys do not reach the row
        }
        tag = in.readTag()
      }
    } catch {
      case e: com.google.protobuf.InvalidProtocolBufferException => throw corrupt(e.getMessage)
    }
    records.foreach { keyIndex =>
      if (keyIndex < 0 || keyIndex >= keys.size) throw corrupt(s"partition key index $keyIndex out of ${keys.size}")
    }
    var sub = 0
    while (sub < records.size) {
      if (SequenceNumbers.isAfter(position, sequenceNumber, sub.toLong)) {
        out.add(keys(records(sub).toInt), data, payloads(2 * sub), payloads(2 * sub + 1), sequenceNumber, sub.toLong,
          arrivalMillis)
      }
      sub += 1
    }
  }

  /** One user record: its key index goes to `records`, its payload's offset in the aggregate and length to `payloads`. */
  private def readRecord(in: CodedInputStream, records: ArrayBuffer[Long], payloads: ArrayBuffer[Int]): Unit = {
    var keyIndex = -1L
    var offset = -1
    var length = 0
    var tag = in.readTag()
    while (tag != 0) {
      WireFormat.getTagFieldNumber(tag) match {
        case 1 => keyIndex = in.readUInt64()
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
    payloads += offset
    payloads += length
  }
}
