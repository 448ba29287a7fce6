package io.github.sparkkinesis.simulator

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

/** The 128-bit hash key space: MD5 of the partition key, as AWS routes records, and uniform shard ranges. */
object HashKeys {
  val Max: BigInt = (BigInt(1) << 128) - 1

  private val md5 = ThreadLocal.withInitial[MessageDigest](() => MessageDigest.getInstance("MD5"))

  def ofPartitionKey(partitionKey: String): BigInt = BigInt(1, md5.get().digest(partitionKey.getBytes(UTF_8)))

  def parseExplicit(value: String): BigInt = {
    val parsed = if (value.nonEmpty && value.length <= 39 && value.forall(Character.isDigit)) BigInt(value) else BigInt(-1)
    if (parsed < 0 || parsed > Max)
      throw KinesisError.invalid(s"ExplicitHashKey $value must be an integer between 0 and 2^128 - 1")
    parsed
  }

  /** Starting hash key of the i-th of n equal ranges. */
  def uniformStart(i: Int, n: Int): BigInt = ((Max + 1) * i) / n

  def uniformRanges(n: Int): Seq[(BigInt, BigInt)] =
    (0 until n).map(i => (uniformStart(i, n), uniformStart(i + 1, n) - 1))
}
