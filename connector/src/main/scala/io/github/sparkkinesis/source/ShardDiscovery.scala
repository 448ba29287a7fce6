package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.{ConnectionConfig, KinesisClientFactory, ShardListing, StreamNotFound, TtlCache}
import software.amazon.awssdk.core.exception.AbortedException
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{ResourceNotFoundException, Shard}

/** A shard as discovery sees it: its parents (resharding lineage), where its hash range starts, whether it is closed. */
final case class ShardMeta(key: ShardKey, parents: Seq[String], startingHashKey: BigInt, closed: Boolean)

/**
 * Driver-side shard listing. ListShards is paginated and allows about 100 calls per second per stream; the
 * result is reused for `shardFetchInterval`, so a query lists each stream at most once per interval.
 */
final class ShardDiscovery(config: SourceConfig) {
  private val client: KinesisClient = KinesisClientFactory.sync(config.connection)
  private val listings = new TtlCache[String, Seq[ShardMeta]](config.shardFetchInterval.toNanos)

  /** The last map built and the listings it came from: until a listing is renewed, the same map is returned. */
  @volatile private var built: (Seq[Seq[ShardMeta]], Map[ShardKey, ShardMeta]) = (Nil, Map.empty)

  /** Every shard listed, by key. The same instance while the listings are unchanged, so callers may memoize on it. */
  def shards(): Map[ShardKey, ShardMeta] = {
    val lists = config.streams.map(stream =>
      listings.get(stream)(before => ShardDiscovery.same(before, listShards(stream))))
    val (from, map) = built
    if (from.size == lists.size && from.zip(lists).forall { case (a, b) => a eq b }) map
    else {
      val fresh = lists.flatten.map(m => m.key -> m).toMap
      built = (lists, fresh)
      fresh
    }
  }

  /** Forget the cached listing: the next call lists again (after a shard was seen to close). */
  def invalidate(): Unit = listings.clear()

  private def listShards(stream: String): Seq[ShardMeta] =
    try ShardListing.all(client, stream, config.streamArn(stream)).map(meta(stream, _))
    catch {
      case e: ResourceNotFoundException => throw ShardDiscovery.streamNotFound(stream, config.connection, e)
      // query.stop() interrupts the driver: Spark recognizes a stop by an InterruptedException, not the SDK's wrapper.
      case e: AbortedException if e.getCause.isInstanceOf[InterruptedException] || Thread.currentThread().isInterrupted =>
        val stopped = new InterruptedException(s"listing the shards of $stream was interrupted")
        stopped.initCause(e)
        throw stopped
    }

  private def meta(stream: String, s: Shard): ShardMeta = ShardMeta(
    ShardKey(stream, s.shardId()),
    Seq(Option(s.parentShardId()), Option(s.adjacentParentShardId())).flatten,
    startingHashKey = Option(s.hashKeyRange()).map(r => BigInt(r.startingHashKey())).getOrElse(BigInt(0)),
    closed = !ShardListing.isOpen(s))
}

object ShardDiscovery {
  /**
   * A listing equal to the one before is that one: a thousand-shard query relists every `shardFetchInterval`,
   * and what is worked out from the listing on each trigger (readable shards, task groups) is kept while it holds.
   */
  def same(before: Option[Seq[ShardMeta]], fresh: Seq[ShardMeta]): Seq[ShardMeta] =
    before.filter(_ == fresh).getOrElse(fresh)

  def streamNotFound(stream: String, connection: ConnectionConfig, cause: Throwable): IllegalArgumentException =
    new IllegalArgumentException(StreamNotFound.message(stream, connection), cause)
}
