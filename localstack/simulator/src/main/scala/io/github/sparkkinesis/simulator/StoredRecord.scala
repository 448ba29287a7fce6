package io.github.sparkkinesis.simulator

/** A record as a shard keeps it; immutable, so responses can be encoded outside the state lock. */
final class StoredRecord(val counter: Long, val arrivalMillis: Long, val partitionKey: String, val data: Array[Byte]) {
  /** Formatted once: every read of the record sends it again. */
  val sequenceNumber: String = SequenceNumbers.format(counter)

  /** What counts against quotas and size limits on AWS: payload plus partition key. */
  def size: Int = data.length + partitionKey.length
}
