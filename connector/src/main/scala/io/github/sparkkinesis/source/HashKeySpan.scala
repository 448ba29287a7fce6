package io.github.sparkkinesis.source

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

/**
 * The hash keys Kinesis routes to a shard, both ends included (ListShards' `HashKeyRange`). A record's hash key is
 * its explicit hash key, else the MD5 of its partition key read as an unsigned 128-bit number. Compared as two
 * unsigned longs: checking every user record of an aggregate costs an MD5 each, no BigInteger.
 */
final case class HashKeySpan(start: BigInt, end: BigInt) {
  require(start >= 0 && start <= end && end <= HashKeySpan.MaxHashKey, s"not a hash key range: $start..$end")
  private val startHigh = (start >> 64).longValue
  private val startLow = start.longValue
  private val endHigh = (end >> 64).longValue
  private val endLow = end.longValue

  def containsPartitionKey(partitionKey: String): Boolean = {
    val md5 = ByteBuffer.wrap(HashKeySpan.md5Of(partitionKey))
    contains(md5.getLong, md5.getLong)
  }

  /** An explicit hash key as records carry it (a decimal string); one that is not a hash key is in no range. */
  def containsExplicit(hashKey: String): Boolean =
    try {
      val k = BigInt(hashKey)
      k >= start && k <= end
    } catch { case _: NumberFormatException => false }

  private def contains(high: Long, low: Long): Boolean =
    compare(startHigh, startLow, high, low) <= 0 && compare(high, low, endHigh, endLow) <= 0

  private def compare(aHigh: Long, aLow: Long, bHigh: Long, bLow: Long): Int =
    java.lang.Long.compareUnsigned(aHigh, bHigh) match {
      case 0 => java.lang.Long.compareUnsigned(aLow, bLow)
      case c => c
    }

  /** Both ends as two unsigned longs each (high, low), how a snapshot task's requests carry them. */
  private[source] def writeTo(out: java.io.DataOutput): Unit = {
    out.writeLong(startHigh); out.writeLong(startLow); out.writeLong(endHigh); out.writeLong(endLow)
  }

  override def toString: String = s"$start..$end"
}

object HashKeySpan {
  val MaxHashKey: BigInt = (BigInt(1) << 128) - 1

  /** A span as [[HashKeySpan.writeTo]] wrote it. */
  private[source] def readFrom(in: java.io.DataInput): HashKeySpan = {
    def key(high: Long, low: Long) =
      BigInt(new java.math.BigInteger(1, ByteBuffer.allocate(16).putLong(high).putLong(low).array()))
    HashKeySpan(key(in.readLong(), in.readLong()), key(in.readLong(), in.readLong()))
  }
  val All: HashKeySpan = HashKeySpan(0, MaxHashKey)

  /** Whether `s` is a hash key as Kinesis takes one: a decimal in [0, 2^128), digits only. */
  def isHashKey(s: String): Boolean =
    s.nonEmpty && s.length <= 39 && s.forall(c => c >= '0' && c <= '9') && BigInt(s) <= MaxHashKey

  /** `MessageDigest.getInstance` looks the algorithm up in the security providers each time: once per thread. */
  private val Md5 = ThreadLocal.withInitial[MessageDigest](() => MessageDigest.getInstance("MD5"))

  /** The MD5 of a partition key's UTF-8 bytes: its hash key, big-endian. The sink routes by the same. */
  def md5Of(partitionKey: String): Array[Byte] = Md5.get().digest(partitionKey.getBytes(StandardCharsets.UTF_8))
}
