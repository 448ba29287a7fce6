package io.github.sparkkinesis.sink
package executor

import io.github.sparkkinesis.source.HashKeySpan
import java.math.BigInteger
import java.nio.ByteBuffer

import scala.util.control.NonFatal

import io.github.sparkkinesis.client.{ConnectionConfig, KinesisClientFactory, ShardListing, StreamArn, TtlCache}
import org.slf4j.LoggerFactory
import software.amazon.awssdk.core.exception.AbortedException
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequestEntry, ResourceNotFoundException}

/**
 * Which open shard Kinesis routes a record to: the shard whose hash-key range holds the record's hash key (its
 * explicit hash key, else the MD5 of its partition key read as an unsigned 128-bit number). The sink uses it to
 * pace each shard by its own throttling; a stale map (the stream was resharded since) only makes pacing less
 * exact, never loses or misroutes a record, since Kinesis does the routing.
 *
 * Hash keys are compared as two unsigned longs, so a lookup is an MD5 and a binary search, with no BigInteger.
 *
 * @param shardIds open shards, ordered by the start of their hash-key range
 */
final class ShardMap private (startHigh: Array[Long], startLow: Array[Long], val shardIds: Array[String]) {
  private val indexById: Map[String, Int] = shardIds.zipWithIndex.toMap

  def size: Int = shardIds.length

  /** The index of a shard id in this map, -1 when it is not one of its open shards. */
  def indexOf(shardId: String): Int = indexById.getOrElse(shardId, -1)

  /** The index (in `shardIds`) of the shard the record goes to. */
  def shardOf(entry: PutRecordsRequestEntry): Int = shardOf(entry.partitionKey(), entry.explicitHashKey())

  /** @param explicitHashKey null when the partition key routes the record */
  def shardOf(partitionKey: String, explicitHashKey: String): Int =
    if (explicitHashKey != null) {
      val key = new BigInteger(explicitHashKey)
      find(key.shiftRight(64).longValue, key.longValue)
    } else {
      val bytes = ByteBuffer.wrap(ShardMap.md5Of(partitionKey))
      find(bytes.getLong, bytes.getLong)
    }

  /** The last shard whose range starts at or below the key. */
  private def find(high: Long, low: Long): Int = {
    var lo = 0
    var hi = shardIds.length - 1
    while (lo < hi) {
      val mid = (lo + hi + 1) >>> 1
      val c = java.lang.Long.compareUnsigned(startHigh(mid), high) match {
        case 0 => java.lang.Long.compareUnsigned(startLow(mid), low)
        case other => other
      }
      if (c <= 0) lo = mid else hi = mid - 1
    }
    lo
  }
}

object ShardMap {
  private val log = LoggerFactory.getLogger(classOf[ShardMap])

  private def md5Of(partitionKey: String): Array[Byte] = HashKeySpan.md5Of(partitionKey)

  /** The hash key Kinesis routes a record by, as PutRecords' `ExplicitHashKey` takes it (a decimal string). */
  def hashKeyOf(partitionKey: String, explicitHashKey: String): String =
    if (explicitHashKey != null) explicitHashKey else new BigInteger(1, md5Of(partitionKey)).toString

  /** @param ranges open shards as (shard id, starting hash key) */
  def apply(ranges: Seq[(String, BigInteger)]): ShardMap = {
    require(ranges.nonEmpty, "a stream has at least one open shard")
    val sorted = ranges.sortWith((a, b) => a._2.compareTo(b._2) < 0).toArray
    new ShardMap(sorted.map(_._2.shiftRight(64).longValue), sorted.map(_._2.longValue), sorted.map(_._1))
  }

  /**
   * ListShards allows 1000 calls per second per stream: each JVM remembers a stream's map for 30 s, and
   * lists again sooner (but not within MinRelistNanos) only when a writer saw a record stored in a shard the map
   * does not know.
   */
  private val MinRelistNanos = 5L * 1000 * 1000 * 1000
  private val cache = new TtlCache[(ConnectionConfig, String), Option[ShardMap]](30L * 1000 * 1000 * 1000)

  /**
   * The stream's open shards, or None when they cannot be listed (a role allowed PutRecords but not ListShards):
   * the sink then paces the stream as a whole, and says so once.
   *
   * @param stale the caller has seen a shard this map does not know: list again unless the map is very recent
   */
  def of(connection: ConnectionConfig, stream: String, stale: Boolean = false): Option[ShardMap] =
    if (stale) cache.get((connection, stream), MinRelistNanos)(load(connection, stream))
    else cache.get((connection, stream))(load(connection, stream))

  /**
   * A map that knows `shardId` if a listing made now would: a record was just stored there. Lists again whenever
   * the cached map does not know it; the new map is cached, so a reshard costs each JVM about one listing.
   */
  def knowing(connection: ConnectionConfig, stream: String, shardId: String): Option[ShardMap] = {
    val cached = of(connection, stream)
    if (cached.exists(_.indexOf(shardId) >= 0)) cached
    else cache.get((connection, stream), 0L)(load(connection, stream))
  }

  /**
   * A map listed at most a second ago: what an aggregating writer starts from, so that a reshard finished before
   * its task started never has it pack records for a closed shard. At most one listing per second per JVM.
   */
  def recent(connection: ConnectionConfig, stream: String): Option[ShardMap] =
    cache.get((connection, stream), MinLookupNanos)(load(connection, stream))

  private val MinLookupNanos = 1000L * 1000 * 1000

  private def load(connection: ConnectionConfig, stream: String)(previous: Option[Option[ShardMap]]): Option[ShardMap] =
    list(connection, stream, warn = previous.forall(_.isDefined))

  private def list(connection: ConnectionConfig, stream: String, warn: Boolean): Option[ShardMap] =
    try {
      val arn = Some(stream).filter(StreamArn.isArn)
      val open = ShardListing.all(KinesisClientFactory.sync(connection), stream, arn).filter(ShardListing.isOpen)
      Some(ShardMap(open.map(s => s.shardId() -> new BigInteger(s.hashKeyRange().startingHashKey()))))
    } catch {
      // A task being killed: not a reason to pace the stream as a whole for the next 30 s.
      case e: AbortedException if Thread.currentThread().isInterrupted => throw e
      // Not a permission to suggest: PutRecords would meet the same missing stream.
      case _: ResourceNotFoundException => throw SinkErrors.streamNotFound(stream, connection)
      case NonFatal(e) =>
        if (warn) {
          log.warn(s"Kinesis sink: cannot list the shards of stream '$stream' (${e.getClass.getSimpleName}: " +
            s"${e.getMessage}); flow control paces the stream as a whole instead of each shard on its own. " +
            "Allow kinesis:ListShards on the stream for per-shard pacing.")
        }
        None
    }
}
