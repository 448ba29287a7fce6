package io.github.sparkkinesis.sink
package executor

import java.util

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry

/**
 * `aggregation=kpl`: packs one writer's user records for one stream into KPL aggregates, one open aggregate per
 * shard, and hands each sealed one to `emit`. Pure logic with explicit time: the map comes from `current`, so
 * tests reshard at will.
 *
 * Every record of an aggregate maps into the shard it is packed for, and the aggregate's explicit hash key (its
 * first record's hash key) sends it there: a reader that splits it finds each user record in the shard its key
 * belongs to, as KCL checks. Everything a shard gets (aggregates and records sent alone) shares one send lane,
 * keyed by the shard id, so no record overtakes an earlier one of its key in another aggregate.
 *
 * An aggregate is sealed when the next record would take it past `maxBytes` (encoded aggregate plus its
 * partition key) or it holds `maxRecords`, when it has waited `lingerNanos` (looked at whenever a record
 * arrives, and at the end of the task), and when all open aggregates together hold more than `maxOpenBytes`. A
 * shard has two open aggregates, one for records with an explicit hash key and one for records without: a reader
 * that takes a missing index for index 0, as `aws-kinesis-agg` does, then never reports a key a record did not
 * have. A record whose key waits in the shard's other aggregate seals that one first, so the key keeps its order.
 * A one-record aggregate goes out as the plain record, and so does a record too large to be packed at all.
 *
 * Resharding: a writer starts from a map listed at most a second before, so a reshard that finished before its
 * task began costs nothing. While it runs, the map is looked at again at most every
 * [[ShardAggregator.MapCheckNanos]]; open aggregates of a shard that closed are unpacked and their records placed
 * again, in order. An aggregate Kinesis stores in another shard than it was packed for (a split finished while it
 * was on its way, and a child got it) is checked against that shard: if any of its records lies outside it, all
 * are sent again, packed for their own shards ([[misplaced]]). KCL skips an aggregate holding a record outside
 * its shard's range, so its readers see each record once; readers that do not check see the first copies too.
 * A merge never misplaces: the merged shard holds both ranges.
 *
 * @param initial the stream's open shards when the writer starts
 * @param current the stream's open shards, as cached for the JVM
 * @param knowing a map that knows the given shard id if a listing now would
 */
final class ShardAggregator(
    maxBytes: Long,
    maxRecords: Int,
    lingerNanos: Long,
    maxOpenBytes: Long,
    initial: ShardMap,
    current: () => ShardMap,
    knowing: String => ShardMap,
    emit: PendingRecord => Unit,
    startNanos: Long) {
  import ShardAggregator._

  // Per shard two open aggregates, at 2 * shard and 2 * shard + 1: records without and with an explicit hash key.
  private final class Open(val shardId: String, val hashKeys: Boolean) {
    var aggregate = new KplAggregate
    var startedNanos = 0L
    var outerKeyBytes = 0
  }

  private var map: ShardMap = initial
  private var open: Array[Open] = new Array(2 * map.size)
  private var openBytes = 0L
  private var nextDeadline = Long.MaxValue
  private var anyOpen = false
  private var lastMapCheckNanos = startNanos

  /** User records sent again because their aggregate landed in a shard that does not hold all of them. */
  var rerouted = 0L

  def hasOpen: Boolean = anyOpen

  /** Encoded bytes in the open aggregates. */
  def heldBytes: Long = openBytes

  def add(r: UserEntry, now: Long): Unit = {
    if (now - lastMapCheckNanos >= MapCheckNanos) {
      lastMapCheckNanos = now
      val m = current()
      if (m ne map) remap(m, now)
    }
    expire(now)
    place(r, now)
    if (openBytes > maxOpenBytes) sealAll()
  }

  /** Seals the aggregates that have waited their linger. */
  def expire(now: Long): Unit = if (anyOpen && now - nextDeadline >= 0) {
    var earliest = Long.MaxValue
    var any = false
    var i = 0
    while (i < open.length) {
      val o = open(i)
      if (o != null && !o.aggregate.isEmpty) {
        if (now - (o.startedNanos + lingerNanos) >= 0) seal(o)
        else {
          any = true
          earliest = math.min(earliest, o.startedNanos + lingerNanos)
        }
      }
      i += 1
    }
    anyOpen = any
    nextDeadline = earliest
  }

  def sealAll(): Unit = {
    var i = 0
    while (i < open.length) {
      if (open(i) != null && !open(i).aggregate.isEmpty) seal(open(i))
      i += 1
    }
    anyOpen = false
    nextDeadline = Long.MaxValue
  }

  /**
   * `stored` was stored in `shardId`, not the shard it was packed for. When that shard does not hold every one of
   * its records (or no listing knows the shard yet), all of them are placed again: KCL drops an aggregate with any
   * record outside its shard's range whole, so sending only the strays would lose the rest for KCL's readers.
   */
  def misplaced(stored: Packed, shardId: String, now: Long): Unit = {
    val m = knowing(shardId)
    if (m ne map) remap(m, now)
    val index = map.indexOf(shardId)
    val entries = stored.entries
    var astray = index < 0
    var i = 0
    while (!astray && i < entries.size) {
      val r = entries.get(i)
      astray = map.shardOf(r.partitionKey, r.explicitHashKey) != index
      i += 1
    }
    if (astray) {
      rerouted += entries.size
      entries.forEach(r => place(r, now))
    }
  }

  private def place(r: UserEntry, now: Long): Unit = {
    val shard = map.shardOf(r.partitionKey, r.explicitHashKey)
    val index = 2 * shard + (if (r.explicitHashKey != null) 1 else 0)
    var o = open(index)
    if (o == null) { o = new Open(map.shardIds(shard), r.explicitHashKey != null); open(index) = o }
    // Earlier records of this key waiting in the shard's other aggregate leave first.
    val other = open(index ^ 1)
    if (other != null && other.aggregate.holdsKey(r.partitionKey)) seal(other)
    val a = o.aggregate
    if (KplAggregate.encodedSizeAlone(r) + r.keyBytes > maxBytes) {
      // Too large to pack: sent alone, after what its shard gathered before it.
      if (!a.isEmpty) seal(o)
      emit(plain(r, o.shardId))
    } else {
      if (!a.isEmpty && (a.count >= maxRecords || a.encodedSizeWith(r) + o.outerKeyBytes > maxBytes)) seal(o)
      if (o.aggregate.isEmpty) {
        o.startedNanos = now
        o.outerKeyBytes = r.keyBytes
        if (!anyOpen || now + lingerNanos - nextDeadline < 0) nextDeadline = now + lingerNanos
        anyOpen = true
      }
      val before = o.aggregate.encodedSize
      o.aggregate.add(r)
      openBytes += o.aggregate.encodedSize - before
      if (o.aggregate.count >= maxRecords) seal(o)
    }
  }

  private def seal(o: Open): Unit = {
    val a = o.aggregate
    openBytes -= a.encodedSize
    o.aggregate = new KplAggregate
    if (a.count == 1) emit(plain(a.entries.get(0), o.shardId))
    else {
      val first = a.entries.get(0)
      val bytes = a.encode()
      val entry = PutRecordsRequestEntry.builder().partitionKey(first.partitionKey)
        .explicitHashKey(ShardMap.hashKeyOf(first.partitionKey, first.explicitHashKey))
        .data(SdkBytes.fromByteArrayUnsafe(bytes)).build()
      emit(new PendingRecord(entry, o.shardId, bytes.length + o.outerKeyBytes, new Packed(o.shardId, a.entries)))
    }
  }

  /** Open aggregates of shards `m` no longer has give their records back, placed again in order. */
  private def remap(m: ShardMap, now: Long): Unit = {
    val old = open
    map = m
    open = new Array(2 * m.size)
    openBytes = 0L
    val orphans = new util.ArrayList[UserEntry]()
    old.foreach { o =>
      if (o != null && !o.aggregate.isEmpty) {
        val shard = m.indexOf(o.shardId)
        if (shard >= 0) {
          open(2 * shard + (if (o.hashKeys) 1 else 0)) = o
          openBytes += o.aggregate.encodedSize
        } else orphans.addAll(o.aggregate.entries)
      }
    }
    orphans.forEach(r => place(r, now))
  }
}

object ShardAggregator {
  /** How often a writer looks at its JVM's cached shard map (itself listed at most every 30 s, or on a reshard). */
  val MapCheckNanos: Long = 1000L * 1000 * 1000

  private def plain(r: UserEntry, shardId: String): PendingRecord = {
    val entry = PutRecordsRequestEntry.builder().partitionKey(r.partitionKey).data(SdkBytes.fromByteArrayUnsafe(r.data))
    if (r.explicitHashKey != null) entry.explicitHashKey(r.explicitHashKey)
    new PendingRecord(entry.build(), shardId, r.size)
  }
}

/** The user records of an aggregate that left, and the shard it was packed for. */
final class Packed(val shardId: String, val entries: util.List[UserEntry])
