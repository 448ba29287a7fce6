package io.github.sparkkinesis.simulator

/**
 * Sequence numbers are one server-wide counter written as a 56-digit decimal string, the length AWS's have.
 * One counter for all shards makes them increase per shard and makes children's numbers larger than their
 * parents', as on AWS; fixed width makes string order and numeric order agree.
 */
object SequenceNumbers {
  private val Prefix = "49"
  private val Digits = 54

  def format(counter: Long): String = {
    val digits = java.lang.Long.toString(counter)
    val sb = new java.lang.StringBuilder(Prefix.length + Digits).append(Prefix)
    var i = digits.length
    while (i < Digits) { sb.append('0'); i += 1 }
    sb.append(digits).toString
  }

  /** The counter a sequence number stands for; InvalidArgumentException for anything this server did not issue. */
  def parse(sequenceNumber: String, field: String): Long = {
    val valid = sequenceNumber != null && sequenceNumber.length == Prefix.length + Digits &&
      sequenceNumber.startsWith(Prefix) && sequenceNumber.forall(Character.isDigit)
    val tail = if (valid) sequenceNumber.substring(Prefix.length).dropWhile(_ == '0') else ""
    if (!valid || tail.length > 18)
      throw KinesisError.invalid(s"$field $sequenceNumber is not a sequence number of this stream")
    if (tail.isEmpty) 0L else tail.toLong
  }
}
