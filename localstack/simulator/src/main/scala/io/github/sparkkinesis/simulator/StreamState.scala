package io.github.sparkkinesis.simulator

import scala.collection.mutable

/**
 * A stream: every shard it ever had (closed ones stay listed until retention passes), the open ones sorted by hash
 * range for routing, and its settings. `incarnation` tells a recreated stream from the one its old iterators name.
 */
final class StreamState(
    val name: String,
    val arn: String,
    val incarnation: Long,
    val createdMillis: Long,
    var retentionHours: Int,
    var maxRecordSizeKiB: Int,
    val account: String = StreamState.Account) {
  /** Its key among the simulator's streams: the name in the caller's account, account-qualified in others. */
  val key: String = StreamState.keyOf(account, name)
  val shards: mutable.ArrayBuffer[Shard] = mutable.ArrayBuffer.empty
  /** Enhanced fan-out consumers by name, in registration order. */
  val consumers: mutable.LinkedHashMap[String, ConsumerState] = mutable.LinkedHashMap.empty
  private var nextShardIndex = 0
  private val byId = mutable.HashMap.empty[String, Shard]
  /** Simulator time from which a data-plane call trims every shard again ([[Simulator.trimFor]]). */
  var nextTrimMillis: Long = Long.MinValue
  private var openByHash: Array[Shard] = Array.empty
  private var listShardsBucketFor: QuotaSettings = _
  private var listShardsBucketValue: TokenBucket = _

  def maxRecordSizeBytes: Int = maxRecordSizeKiB * 1024

  def newShardId(): String = {
    val id = f"shardId-$nextShardIndex%012d"
    nextShardIndex += 1
    id
  }

  def addShard(shard: Shard): Unit = { shards += shard; byId(shard.id) = shard; reindex() }

  /** Drops shards retention has passed. */
  def removeShards(gone: collection.Seq[Shard]): Unit = { shards --= gone; gone.foreach(s => byId.remove(s.id)) }

  /** Call after closing shards, so routing only sees open ones. */
  def reindex(): Unit = openByHash = shards.iterator.filter(_.isOpen).toArray.sortBy(_.startHash)

  def openShards: Seq[Shard] = openByHash.toSeq

  /** By id: a search of the list took most of the simulator's time at 10,000 shards (a lookup per call). */
  def shard(id: String): Option[Shard] = byId.get(id)

  /** The open shard whose range holds `hash`: a binary search over the sorted open ranges. */
  def route(hash: BigInt): Shard = {
    var lo = 0
    var hi = openByHash.length - 1
    while (lo < hi) {
      val mid = (lo + hi + 1) >>> 1
      if (openByHash(mid).startHash <= hash) lo = mid else hi = mid - 1
    }
    openByHash(lo)
  }

  def listShardsBucket(settings: QuotaSettings, now: Long): TokenBucket = {
    if (listShardsBucketFor ne settings) {
      listShardsBucketValue = new TokenBucket(settings.listShardsPerSecond, now)
      listShardsBucketFor = settings
    }
    listShardsBucketValue
  }
}

object StreamState {
  val DefaultRetentionHours = 24
  val DefaultMaxRecordSizeKiB = 1024
  val Account = "000000000000"

  def keyOf(account: String, name: String): String = if (account == Account) name else s"$account:$name"
}
