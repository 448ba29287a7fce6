package io.github.sparkkinesis.simulator

/** A record as a shard keeps it; immutable, so responses can be encoded outside the state lock. */
final class StoredRecord(val counter: Long, val arrivalMillis: Long, val partitionKey: String, val data: Array[Byte]) {
  /** Formatted and encoded once (ASCII digits, so also UTF-8): every read of the record sends it again. */
  val sequenceNumberBytes: Array[Byte] = SequenceNumbers.format(counter).getBytes(java.nio.charset.StandardCharsets.US_ASCII)

  def sequenceNumber: String = new String(sequenceNumberBytes, java.nio.charset.StandardCharsets.US_ASCII)

  /** What counts against quotas and size limits on AWS: payload plus partition key. */
  def size: Int = data.length + partitionKey.length
}
