package io.github.sparkkinesis.source
package driver

/**
 * What a stream's executors hold of each snapshot group ([[executor.StandingGroups]]): the requests of the group's
 * last answered task and their generation. A trigger sends each task only the requests that differ from those
 * (at 10,000 shards, a trigger with a tenth of them moving sent and decoded all 10,000); a group whose shards
 * changed, or whose executor is not known to hold it, is sent in full.
 */
private[source] final class SentGroups {
  private var generation = 0L
  /** By group index: the generation its executor was last sent, and the group's requests as of it. */
  private var held = Map.empty[Int, (Long, Seq[SnapshotRequest])]

  /** This trigger's asks, one per group, each against what its executor holds. */
  def asks(groups: Seq[Seq[SnapshotRequest]]): Vector[SnapshotAsk] = synchronized {
    generation += 1
    groups.iterator.zipWithIndex.map { case (requests, g) =>
      held.get(g)
        .flatMap { case (base, before) =>
          SentGroups.changes(before, requests).map(SnapshotAsk(g, generation, Some(base), requests.size, _))
        }
        .getOrElse(SnapshotAsk.full(g, generation, requests))
    }.toVector
  }

  /** Group `g` asked in full (its task ran where the group was not held). */
  def full(g: Int, requests: Seq[SnapshotRequest]): SnapshotAsk = synchronized {
    generation += 1
    SnapshotAsk.full(g, generation, requests)
  }

  /** `ask`'s task answered: its executor holds `requests` as of the ask's generation. */
  def answered(ask: SnapshotAsk, requests: Seq[SnapshotRequest]): Unit = synchronized {
    held += ask.group -> (ask.generation -> requests)
  }

  /** A snapshot job failed: what each executor holds is not known. */
  def reset(): Unit = synchronized { held = Map.empty }
}

private[source] object SentGroups {
  /** The requests of `now` that differ from `before`, by index; None when they are not the same shards in order. */
  def changes(before: Seq[SnapshotRequest], now: Seq[SnapshotRequest]): Option[Vector[(Int, SnapshotRequest)]] =
    if (before eq now) Some(Vector.empty) // a group none of whose shards moved (StandingRequests)
    else if (before.size != now.size) None
    else {
      val changed = Vector.newBuilder[(Int, SnapshotRequest)]
      val b = before.iterator
      val n = now.iterator
      var i = 0
      var same = true
      while (same && n.hasNext) {
        val was = b.next()
        val is = n.next()
        // Most requests are the very ones of the trigger before (keys, positions and ranges are kept objects).
        if (!(was eq is) && was != is) {
          if (was.key != is.key) same = false else changed += i -> is
        }
        i += 1
      }
      if (same) Some(changed.result()) else None
    }
}
