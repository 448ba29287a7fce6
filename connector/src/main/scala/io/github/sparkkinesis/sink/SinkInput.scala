package io.github.sparkkinesis.sink

import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction, MalformedInputException, StandardCharsets}

/**
 * The per-row checks of the sink's input that need more than a length or a null test (SPEC §3): pure, so each is
 * unit-tested on its own; [[executor.KinesisDataWriter]] applies them before a row joins a request.
 */
object SinkInput {
  private val StreamName = "[a-zA-Z0-9_.-]{1,128}".r

  /** A row's position as messages name it: its number among the rows the task took (from 1) and the partition. */
  def position(row: Long, partition: Option[Int]): String =
    s"row $row of this task" + partition.map(p => s" (partition $p)").getOrElse("")

  /**
   * Why `bytes` are not well-formed UTF-8, or None when they are. Spark strings are UTF-8 bytes that may hold
   * anything (a cast from binary, a lone surrogate encoded as three bytes by a CESU-8 or Modified UTF-8 writer);
   * Java, the SDK and Kinesis would see U+FFFD instead of each bad sequence, so a different key.
   */
  def malformedUtf8(bytes: Array[Byte]): Option[String] = {
    val decoder = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPORT)
      .onUnmappableCharacter(CodingErrorAction.REPORT)
    val in = ByteBuffer.wrap(bytes)
    try {
      decoder.decode(in)
      None
    } catch {
      case e: MalformedInputException =>
        val at = in.position()
        val bad = bytes.slice(at, at + e.getInputLength).map(b => f"${b & 0xff}%02X").mkString(" ")
        val what =
          if ((bytes(at) & 0xff) == 0xed && at + 1 < bytes.length && (bytes(at + 1) & 0xe0) == 0xa0)
            "an encoded lone surrogate (invalid UTF-16)"
          else "bytes that are not UTF-8"
        Some(s"$what at byte $at ($bad)")
      case e: CharacterCodingException => Some(s"bytes that are not UTF-8 (${e.getMessage})")
    }
  }

  /** Why a `stream` column's value (not an ARN) cannot name a Kinesis stream, or None when it can. */
  def badStreamName(value: String): Option[String] =
    if (StreamName.pattern.matcher(value).matches()) None
    else if (value.isEmpty) Some("it is empty")
    else if (value.length > 128) Some(s"it has ${value.length} characters (a stream name has at most 128)")
    else Some("it is neither a stream name (letters, digits, '_', '.' and '-') nor a stream ARN")
}
