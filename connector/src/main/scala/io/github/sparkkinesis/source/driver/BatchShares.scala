package io.github.sparkkinesis.source
package driver

/**
 * How a capped micro-batch is shared among shards: each shard's share of `maxRecordsPerTrigger` and of
 * `maxBytesPerTrigger` is in proportion to what it has ready (as Kafka shares by each partition's backlog), no
 * share is larger than what the shard has ready (nor than `maxRecordsPerShardPerTrigger`), and what a share
 * leaves unused goes to the other shards. A skewed backlog (one hot shard, many idle) so fills the batch, where
 * even shares left the hot shard waiting behind idle shards' unused ones.
 */
object BatchShares {
  /** What one shard has ready past the batch's start: records and their bytes. */
  final case class Ready(records: Long, bytes: Long)

  /** A shard's share: it takes records up to both, cut at a record (see [[ShardFeed.state]]). */
  final case class Share(records: Long, bytes: Long) {
    def takesAll(ready: Ready): Boolean = records >= ready.records && bytes >= ready.bytes
  }

  /**
   * Each shard's share, in the order of `ready`. Records are shared exactly: the shares add up to the smaller of
   * the limit and all that is ready. Bytes are budgets in proportion to each shard's ready bytes; a shard cuts at
   * its last whole record within its budget, so a byte-capped batch can fall short of the limit by less than a
   * record per shard.
   */
  def of(
      ready: IndexedSeq[Ready],
      maxRecords: Option[Long],
      maxBytes: Option[Long],
      maxRecordsPerShard: Option[Long] = None): IndexedSeq[Share] = {
    val recordCaps = ready.map(r => maxRecordsPerShard.fold(r.records)(math.min(_, r.records)))
    val records = maxRecords.fold(recordCaps)(proportional(recordCaps, ready.map(_.records), _))
    val bytes = maxBytes.fold(ready.map(_.bytes))(proportional(ready.map(_.bytes), ready.map(_.bytes), _))
    records.zip(bytes).map { case (r, b) => Share(r, b) }
  }

  /**
   * `total` shared in proportion to `weights`, no share above its `cap`; what capped shares leave is shared
   * among the others the same way, and the last units left by rounding down go to the largest remainders
   * (ties: the first shard). The shares add up to `min(total, caps.sum)`. `caps` and `weights` are of the same shards.
   */
  def proportional(caps: IndexedSeq[Long], weights: IndexedSeq[Long], total: Long): IndexedSeq[Long] = {
    val shares = Array.fill(caps.size)(0L)
    var open = caps.indices.filter(caps(_) > 0)
    var left = math.max(0L, total)
    var settled = false
    // Each round either settles every open shard or caps at least one, so there are at most caps.size rounds.
    while (!settled && open.nonEmpty && left > 0) {
      val weight = BigDecimal(open.map(i => math.max(1L, weights(i))).sum)
      def exact(i: Int) = BigDecimal(left) * math.max(1L, weights(i)) / weight
      val capped = open.filter(i => exact(i) >= caps(i))
      if (capped.nonEmpty) {
        capped.foreach { i => shares(i) = caps(i); left -= caps(i) }
        open = open.filterNot(capped.toSet)
      } else {
        val floors = open.map(i => i -> exact(i).setScale(0, BigDecimal.RoundingMode.FLOOR).toLongExact)
        floors.foreach { case (i, n) => shares(i) = n }
        val rest = left - floors.map(_._2).sum
        // Below a share's cap (exact < cap), so one more record never passes it.
        open.sortBy(i => (-(exact(i) - shares(i)), i)).take(rest.toInt).foreach(i => shares(i) += 1)
        settled = true
      }
    }
    shares.toIndexedSeq
  }
}
