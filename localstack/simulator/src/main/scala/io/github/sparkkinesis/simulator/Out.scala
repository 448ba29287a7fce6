package io.github.sparkkinesis.simulator

import scala.language.implicitConversions

/**
 * A response body independent of the wire format: operations build it under the state lock from immutable parts,
 * and WireFormat encodes it as JSON or CBOR outside the lock. Blobs and timestamps are kept apart because the two
 * formats write them differently.
 */
sealed trait Out

object Out {
  final case class Obj(fields: Seq[(String, Out)]) extends Out
  final case class Arr(items: Seq[Out]) extends Out
  final case class Str(value: String) extends Out
  final case class Num(value: Long) extends Out
  final case class Bool(value: Boolean) extends Out
  final case class Blob(value: Array[Byte]) extends Out
  final case class Timestamp(millis: Long) extends Out
  /** GetRecords' records, written straight from the stored ones: the one large response, kept allocation-free. */
  final case class Records(records: IndexedSeq[StoredRecord]) extends Out
  /** PutRecords' per-record results: a shard id and a record, or an error code and message. */
  final case class PutResults(results: IndexedSeq[PutResult]) extends Out
  sealed trait PutResult
  final case class Accepted(shardId: String, record: StoredRecord) extends PutResult
  final case class Failed(errorCode: String, errorMessage: String) extends PutResult

  /** An object without the fields given as None, as AWS leaves absent members out. */
  def obj(fields: (String, Option[Out])*): Obj = Obj(fields.collect { case (k, Some(v)) => k -> v })

  val empty: Obj = Obj(Nil)

  /** Lets `obj` take present fields without wrapping each in Some. */
  implicit def some(out: Out): Option[Out] = Some(out)
}
