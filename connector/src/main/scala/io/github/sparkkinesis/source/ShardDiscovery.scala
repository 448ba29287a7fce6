package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.{
  ConnectionConfig,
  KinesisClientFactory,
  KinesisClockBound,
  ShardListing,
  StreamNotFound,
  TtlCache
}
import software.amazon.awssdk.core.exception.AbortedException
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{ResourceNotFoundException, Shard}

/** A shard as discovery sees it: its parents (resharding lineage), its hash key range, whether it is closed. */
final case class ShardMeta(
    key: ShardKey,
    parents: Seq[String],
    startingHashKey: BigInt,
    closed: Boolean,
    endingHashKey: BigInt = HashKeySpan.MaxHashKey) {
  lazy val hashKeys: HashKeySpan = HashKeySpan(startingHashKey, endingHashKey)
}

/**
 * Driver-side shard listing. ListShards is paginated and allows 1000 calls per second per stream; a listing
 * is reused for `shardFetchInterval`, so a query lists each stream at most once per interval.
 *
 * Relisting a thousand shards every second costs the driver more than anything else an idle query does on it, and
 * tells it nothing new almost every time. So after a complete listing, the next ones ask only for shards created
 * after the newest one it holds (resharding always creates shards): when there are none, the listing stands.
 * When there are, the stream is listed in full again (their parents are closed now), as it is after a reader met a
 * shard's end ([[invalidate]]) and at least every [[ShardDiscovery.CompleteListingInterval]]. What only a complete
 * listing shows, shards expired past the retention, a query's first offset sees within `shardFetchInterval`
 * ([[completeShards]]) and a batch's offset within [[ShardDiscovery.PlannedListingInterval]] ([[plannedShards]]).
 */
final class ShardDiscovery(config: SourceConfig) {
  import ShardDiscovery.Listing
  private val client: KinesisClient = KinesisClientFactory.sync(config.connection)
  private val ttlNanos = config.shardFetchInterval.toNanos
  private val completeNanos = math.max(ttlNanos, ShardDiscovery.CompleteListingInterval.toNanos)
  private val plannedNanos = math.max(ttlNanos, ShardDiscovery.PlannedListingInterval.toNanos)
  private val listings = new TtlCache[String, Listing](ttlNanos)
  /** Kinesis' clock as complete listings tell it (see [[KinesisClockBound]]), for `latest`. */
  val clock = new KinesisClockBound

  /** The last map built and the listings it came from: until a listing is renewed, the same map is returned. */
  @volatile private var built: (Seq[Seq[ShardMeta]], Map[ShardKey, ShardMeta]) = (Nil, Map.empty)

  /**
   * Every shard listed, by key: shards created up to `shardFetchInterval` ago included, shards expired past the
   * retention possibly still in. The same instance while the listings are unchanged, so callers may memoize on it.
   */
  def shards(): Map[ShardKey, ShardMeta] = build()

  /** As [[shards]], from complete listings at most `shardFetchInterval` old: what a batch's offset is planned from. */
  def completeShards(): Map[ShardKey, ShardMeta] = build(complete = Some(ttlNanos))

  /** As [[shards]], from complete listings at most [[ShardDiscovery.PlannedListingInterval]] old: a batch's offset. */
  def plannedShards(): Map[ShardKey, ShardMeta] = build(complete = Some(plannedNanos))

  private def build(complete: Option[Long] = None): Map[ShardKey, ShardMeta] = {
    val lists = config.streams.map { stream =>
      val cached = listings.get(stream)(before => relist(stream, before))
      val stale = complete.exists(System.nanoTime() - cached.completeNanos >= _)
      if (stale) listings.get(stream, 0L)(list(stream, _)).shards else cached.shards
    }
    val (from, map) = built
    if (from.size == lists.size && from.zip(lists).forall { case (a, b) => a eq b }) map
    else {
      val fresh = lists.flatten.map(m => m.key -> m).toMap
      built = (lists, fresh)
      fresh
    }
  }

  private def relist(stream: String, before: Option[Listing]): Listing = before match {
    case Some(known) if System.nanoTime() - known.completeNanos < completeNanos && known.newest.nonEmpty =>
      val added = listing(stream)(ShardListing.after(client, stream, config.streamArn(stream), known.newest.get))
      if (added.forall(s => known.ids.contains(s.shardId()))) known else list(stream, before)
    case _ => list(stream, before)
  }

  /** A complete listing; one equal to the listing before is that one (see [[ShardDiscovery.same]]). */
  private def list(stream: String, before: Option[Listing]): Listing = {
    val now = System.nanoTime()
    val fresh =
      listing(stream)(ShardListing.all(client, stream, config.streamArn(stream), Some(clock))).map(meta(stream, _))
    Listing(ShardDiscovery.same(before.map(_.shards), fresh), now)
  }

  /** Forget the cached listing: the next call lists again (after a shard was seen to close). */
  def invalidate(): Unit = listings.clear()

  private def listing[A](stream: String)(call: => A): A =
    try call
    catch {
      case e: ResourceNotFoundException => throw ShardDiscovery.streamNotFound(stream, config.connection, e)
      // query.stop() interrupts the driver: Spark recognizes a stop by an InterruptedException, not the SDK's wrapper.
      case e: AbortedException
          if e.getCause.isInstanceOf[InterruptedException] || Thread.currentThread().isInterrupted =>
        val stopped = new InterruptedException(s"listing the shards of $stream was interrupted")
        stopped.initCause(e)
        throw stopped
    }

  private def meta(stream: String, s: Shard): ShardMeta = ShardMeta(
    ShardKey(stream, s.shardId()),
    Seq(Option(s.parentShardId()), Option(s.adjacentParentShardId())).flatten,
    startingHashKey = Option(s.hashKeyRange()).map(r => BigInt(r.startingHashKey())).getOrElse(BigInt(0)),
    closed = !ShardListing.isOpen(s),
    endingHashKey = Option(s.hashKeyRange()).map(r => BigInt(r.endingHashKey())).getOrElse(HashKeySpan.MaxHashKey)
  )
}

object ShardDiscovery {
  /** The longest a listing goes without a complete relisting, whatever the triggers plan. */
  val CompleteListingInterval: java.time.Duration = java.time.Duration.ofSeconds(60)
  /**
   * The oldest complete listing a batch's offset is planned from (or `shardFetchInterval`, if longer): shards
   * expired past the retention leave the offset, or are reported lost, within this. New shards need no complete
   * listing. At 10,000 shards a complete listing is ten ListShards pages; made for every batch a second or more
   * apart, it was the largest part of planning one.
   */
  val PlannedListingInterval: java.time.Duration = java.time.Duration.ofSeconds(10)

  /** One stream's shards, the newest shard id among them, and when the shards were last listed in full. */
  final case class Listing(shards: Seq[ShardMeta], completeNanos: Long) {
    lazy val ids: Set[String] = shards.iterator.map(_.key.shardId).toSet
    val newest: Option[String] = if (shards.isEmpty) None else Some(shards.iterator.map(_.key.shardId).max)
  }

  /**
   * A listing equal to the one before is that one: a thousand-shard query relists every `shardFetchInterval`,
   * and what is worked out from the listing on each trigger (readable shards, task groups) is kept while it holds.
   */
  def same(before: Option[Seq[ShardMeta]], fresh: Seq[ShardMeta]): Seq[ShardMeta] =
    before.filter(_ == fresh).getOrElse(fresh)

  def streamNotFound(stream: String, connection: ConnectionConfig, cause: Throwable): IllegalArgumentException =
    new IllegalArgumentException(StreamNotFound.message(stream, connection), cause)
}
