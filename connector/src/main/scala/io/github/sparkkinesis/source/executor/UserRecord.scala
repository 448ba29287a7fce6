package io.github.sparkkinesis.source
package executor

/** One user record as the source emits it (a KPL aggregate yields several, with increasing sub-sequence numbers). */
final case class UserRecord(
    partitionKey: String,
    data: Array[Byte],
    sequenceNumber: String,
    subSequenceNumber: Long,
    arrivalMillis: Long) {
  def position: ShardPosition.After = ShardPosition.After(sequenceNumber, subSequenceNumber)
}

/** Kinesis sequence numbers are unsigned decimal strings of up to 128 digits; compared without allocating. */
object SequenceNumbers {
  def compare(a: String, b: String): Int =
    if (a.length != b.length) Integer.compare(a.length, b.length) else a.compareTo(b)

  /** True when record (seq, sub) comes after `position`, i.e. it has not been read yet. */
  def isAfter(position: ShardPosition, seq: String, sub: Long): Boolean = position match {
    case ShardPosition.After(s, ss) =>
      val c = compare(seq, s)
      c > 0 || (c == 0 && sub > ss)
    case ShardPosition.AtTimestamp(_) | ShardPosition.TrimHorizon => true
    case ShardPosition.ShardEnd => false
  }

}
