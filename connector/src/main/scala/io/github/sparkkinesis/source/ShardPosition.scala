package io.github.sparkkinesis.source

/** Where reading a shard resumes. See docs/design/offsets.md for the JSON form and the resume rules. */
sealed trait ShardPosition extends Serializable

object ShardPosition {
  /** Every user record up to (`sequenceNumber`, `subSequenceNumber`) inclusive has been read. */
  final case class After(sequenceNumber: String, subSequenceNumber: Long) extends ShardPosition

  /** Nothing read; start at records that arrived at or after `epochMillis`. */
  final case class AtTimestamp(epochMillis: Long) extends ShardPosition

  /** Nothing read; start at the oldest record. */
  case object TrimHorizon extends ShardPosition

  /** The shard is closed and all of it has been read. */
  case object ShardEnd extends ShardPosition

}
