package io.github.sparkkinesis.simulator

/**
 * A shard: its place in the hash key space and the lineage AWS reports, its records, and its own quota buckets.
 * Sequence numbers of its records lie strictly between `startCounter` and `endCounter` (set when it closes).
 */
final class Shard(
    val id: String,
    val parentId: Option[String],
    val adjacentParentId: Option[String],
    val startHash: BigInt,
    val endHash: BigInt,
    val startCounter: Long,
    val createdMillis: Long) {
  val log = new RecordLog
  var endCounter: Option[Long] = None
  var closedMillis: Option[Long] = None
  var childIds: Seq[String] = Nil

  private var bucketsFor: QuotaSettings = _
  private var buckets: ShardBuckets = _

  def isOpen: Boolean = endCounter.isEmpty

  def containsHash(hash: BigInt): Boolean = startHash <= hash && hash <= endHash

  def close(counter: Long, now: Long, children: Seq[String]): Unit = {
    endCounter = Some(counter)
    closedMillis = Some(now)
    childIds = children
  }

  /** Buckets are rebuilt when a test changes the quotas, so the new rates apply at once. */
  def quotaBuckets(settings: QuotaSettings, now: Long): ShardBuckets = {
    if (bucketsFor ne settings) {
      buckets = new ShardBuckets(settings, now)
      bucketsFor = settings
    }
    buckets
  }
}

final class ShardBuckets(settings: QuotaSettings, now: Long) {
  val writeBytes = new TokenBucket(settings.writeBytesPerSecond, now)
  val writeRecords = new TokenBucket(settings.writeRecordsPerSecond, now)
  val readCalls = new TokenBucket(settings.readCallsPerSecond, now)
  val readBytes = new TokenBucket(settings.readBytesPerSecond, now)
  val getShardIterator = new TokenBucket(settings.getShardIteratorPerSecond, now)
}
