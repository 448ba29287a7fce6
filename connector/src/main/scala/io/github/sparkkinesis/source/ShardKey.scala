package io.github.sparkkinesis.source

/** A shard of one of the streams a query reads. */
final case class ShardKey(stream: String, shardId: String) {
  // Kept, not recomputed: an idle trigger at a thousand shards looks keys up in maps and sets several times over.
  override val hashCode: Int = 31 * stream.hashCode + shardId.hashCode
  override def toString: String = s"$stream/$shardId"
}

object ShardKey {
  implicit val ordering: Ordering[ShardKey] = Ordering.by(k => (k.stream, k.shardId))
}
