package io.github.sparkkinesis.source

/** A shard of one of the streams a query reads. */
final case class ShardKey(stream: String, shardId: String) {
  override def toString: String = s"$stream/$shardId"
}

object ShardKey {
  implicit val ordering: Ordering[ShardKey] = Ordering.by(k => (k.stream, k.shardId))
}
