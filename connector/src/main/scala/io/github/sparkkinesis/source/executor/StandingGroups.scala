package io.github.sparkkinesis.source
package executor

import java.util.concurrent.ConcurrentHashMap

/**
 * Each snapshot group's requests and feeds as its last task in this JVM left them, by source and group, with the
 * generation the driver gave them. The next task of the group is sent only the requests that changed since
 * ([[SnapshotAsk]]): at 10,000 shards with a tenth of them moving, a trigger otherwise decoded every shard's
 * request and looked every feed up again (`Prefetcher.feedFor`), most of a snapshot task's CPU.
 *
 * A feed kept here is exactly the one `feedFor` would return for an unchanged request (it reached that start
 * already), unless it stopped since (dropped as abandoned, its query released): then it is made again.
 */
private[source] object StandingGroups {
  private final class Group(val generation: Long, val requests: Vector[SnapshotRequest], val feeds: Vector[ShardFeed]) {
    val usedNanos: Long = System.nanoTime()
  }

  private val groups = new ConcurrentHashMap[(String, Int), Group]()

  /**
   * The ask's requests with their feeds, or None when it builds on a generation this JVM does not hold (the task
   * ran on another executor than the group's last one, or this JVM dropped it): the driver asks again in full.
   * `feedOf` makes (or finds) the feed of a request; `kept` marks the unchanged feeds as used.
   */
  def resolve(sourceId: String, ask: SnapshotAsk)(
      feedOf: SnapshotRequest => ShardFeed,
      kept: Seq[ShardFeed] => Unit): Option[Vector[(SnapshotRequest, ShardFeed)]] = {
    val resolved = ask.base match {
      case None =>
        val requests = ask.changed.map(_._2).toVector
        Some(requests -> requests.map(feedOf))
      case Some(base) =>
        Option(groups.get((sourceId, ask.group)))
          .filter(g => g.generation == base && g.requests.size == ask.size)
          .map { g =>
            val requests = g.requests.toArray
            val feeds = g.feeds.toArray
            val remade = new Array[Boolean](ask.size)
            for ((i, r) <- ask.changed) { requests(i) = r; feeds(i) = feedOf(r); remade(i) = true }
            val unchanged = Vector.newBuilder[ShardFeed]
            var i = 0
            while (i < feeds.length) {
              if (!remade(i)) {
                if (feeds(i).stopped) feeds(i) = feedOf(requests(i)) else unchanged += feeds(i)
              }
              i += 1
            }
            kept(unchanged.result())
            requests.toVector -> feeds.toVector
          }
    }
    resolved.map { case (requests, feeds) =>
      if (ask.group >= 0) groups.put((sourceId, ask.group), new Group(ask.generation, requests, feeds))
      requests.zip(feeds)
    }
  }

  /** A stopped query's groups. */
  def release(sourceId: String): Unit = groups.keySet().removeIf(_._1 == sourceId)

  /** Groups no task used for `afterNanos` (the driver moved them, or its query is gone): their feeds go too. */
  def evict(now: Long, afterNanos: String => Long): Unit =
    groups.entrySet().removeIf(e => now - e.getValue.usedNanos > afterNanos(e.getKey._1))

  /** Groups held in this JVM, all queries together (for tests). */
  def size: Int = groups.size()
}
