package io.github.sparkkinesis.simulator

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

/**
 * Shard iterators carry their whole state (stream incarnation, shard, position, time of issue), so the server
 * keeps nothing per iterator and an iterator of a deleted or recreated stream is recognised as such.
 */
final case class ShardIterator(stream: String, incarnation: Long, shardId: String, position: Long, issuedMillis: Long) {
  def encode: String = Base64.getEncoder.encodeToString(
    s"v1|$incarnation|$issuedMillis|$position|$shardId|$stream".getBytes(UTF_8))
}

object ShardIterator {
  def decode(token: String): ShardIterator = {
    val fields = try new String(Base64.getDecoder.decode(token), UTF_8).split('|')
      catch { case _: IllegalArgumentException => Array.empty[String] }
    try {
      val Array("v1", incarnation, issued, position, shardId, stream) = fields
      ShardIterator(stream, incarnation.toLong, shardId, position.toLong, issued.toLong)
    } catch {
      case _: MatchError | _: NumberFormatException => throw KinesisError.invalid("Invalid ShardIterator.")
    }
  }
}
