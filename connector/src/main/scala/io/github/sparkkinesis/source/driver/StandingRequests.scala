package io.github.sparkkinesis.source
package driver

import io.github.sparkkinesis.source.ShardPosition.TrimHorizon

/**
 * A stream's snapshot requests, one list per task group, kept between triggers: when a trigger starts where the
 * last planned batch ended, only the shards that batch moved get new requests, the others (and every group none
 * of them is in) are the very objects of the trigger before, which [[SentGroups]] then passes over at a glance.
 * At 10,000 shards a tenth of them with a record a second, each trigger built 10,000 requests and compared them
 * with the last ones to find the hundred that changed. Driver only, on the query's thread.
 */
private[source] final class StandingRequests {
  import StandingRequests._

  private var kept: Kept = _

  /**
   * The requests of `groups` (task groups with their owners, [[FetchPlanner.keyGroups]]) from `start` as the
   * listing `shards` describes them. `lastBatch`: the last batch planned, its start, its end and the shards it
   * moved.
   */
  def of(
      groups: Seq[(Seq[ShardKey], Option[String])],
      shards: Map[ShardKey, ShardMeta],
      start: KinesisSourceOffset,
      perShard: Long,
      lastBatch: Option[(KinesisSourceOffset, KinesisSourceOffset, Set[ShardKey])]): Vector[Vector[SnapshotRequest]] = {
    def request(key: ShardKey) =
      SnapshotRequest.of(shards, key, start.get(key).getOrElse(TrimHorizon), perShard, Long.MaxValue)
    val k = kept
    val same = k != null && (k.groups eq groups) && (k.shards eq shards) && k.perShard == perShard
    val requests =
      if (same && (k.start eq start)) k.requests
      else lastBatch match {
        // Only the moved shards' positions differ: the offset after a batch is its start moved by the batch (a
        // listing that changed is a new `shards`, and a shard read to its end new `groups`).
        case Some((from, to, moved)) if same && (from eq k.start) && (to eq start) =>
          moved.foldLeft(k.requests) { (rs, key) =>
            k.index.get(key).fold(rs) { case (g, i) => rs.updated(g, rs(g).updated(i, request(key))) }
          }
        case _ => groups.iterator.map(_._1.iterator.map(request).toVector).toVector
      }
    kept = new Kept(groups, shards, perShard, start, requests, if (same) k.index else null)
    requests
  }
}

private object StandingRequests {
  private final class Kept(
      val groups: Seq[(Seq[ShardKey], Option[String])],
      val shards: Map[ShardKey, ShardMeta],
      val perShard: Long,
      val start: KinesisSourceOffset,
      val requests: Vector[Vector[SnapshotRequest]],
      known: Map[ShardKey, (Int, Int)]) {
    /** Each shard's group and place in it, worked out once per set of groups. */
    lazy val index: Map[ShardKey, (Int, Int)] =
      if (known != null) known
      else groups.iterator.zipWithIndex.flatMap { case ((keys, _), g) =>
        keys.iterator.zipWithIndex.map { case (key, i) => key -> (g -> i) }
      }.toMap
  }
}
