package io.github.sparkkinesis.simulator

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

/**
 * Shard iterators carry their whole state (stream incarnation, shard, position, time of issue and place in the
 * order of issue), so the server keeps nothing per iterator and an iterator of a deleted or recreated stream is
 * recognised as such. `serial` orders iterators whatever the simulated clock did between them (its offset can move
 * back): the admin API's forced expiry goes by it.
 */
final case class ShardIterator(
    stream: String,
    incarnation: Long,
    shardId: String,
    position: Long,
    issuedMillis: Long,
    serial: Long) {
  def encode: String = Base64.getEncoder.encodeToString(
    s"v2|$incarnation|$issuedMillis|$serial|$position|$shardId|$stream".getBytes(UTF_8))
}

object ShardIterator {
  def decode(token: String): ShardIterator = {
    val fields = try new String(Base64.getDecoder.decode(token), UTF_8).split('|')
      catch { case _: IllegalArgumentException => Array.empty[String] }
    try {
      val Array("v2", incarnation, issued, serial, position, shardId, stream) = fields
      ShardIterator(stream, incarnation.toLong, shardId, position.toLong, issued.toLong, serial.toLong)
    } catch {
      case _: MatchError | _: NumberFormatException => throw KinesisError.invalid("Invalid ShardIterator.")
    }
  }
}
