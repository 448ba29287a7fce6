package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging
import org.apache.spark.sql.connector.read.streaming._

/** Driver-side decisions that need no Spark job: first positions, which shards may be read, task groups. */
final class FetchPlanner(config: SourceConfig, discovery: ShardDiscovery) extends Logging {

  /** The first offset of a new query: `initialPosition` made concrete for every shard that exists now. */
  def initialOffset(nowMillis: Long): KinesisSourceOffset = {
    val shards = discovery.shards().values.toSeq
    val positions: Seq[(ShardKey, ShardPosition)] = config.initialPosition match {
      case InitialPosition.Latest =>
        // Closed shards hold only records from before the start. The second absorbs clock skew.
        shards.map(s => s.key -> (if (s.closed) ShardEnd else AtTimestamp(nowMillis - FetchPlanner.LatestSkewMillis)))
      case InitialPosition.TrimHorizon => shards.map(_.key -> TrimHorizon)
      case InitialPosition.AtTimestamp(ms) => shards.map(_.key -> AtTimestamp(ms))
      case InitialPosition.PerShard(given) =>
        val unknown = given.keySet -- shards.map(_.key)
        if (unknown.nonEmpty) {
          throw new IllegalArgumentException(s"Option 'initialPosition' names shards that do not exist: " +
            s"${unknown.toSeq.sorted.mkString(", ")}; existing shards: ${shards.map(_.key).sorted.mkString(", ")}")
        }
        shards.map(s => s.key -> given.getOrElse(s.key, TrimHorizon))
    }
    KinesisSourceOffset(positions.toMap)
  }

  /** A checkpoint must belong to the streams the query reads. */
  def checkStreams(offset: KinesisSourceOffset): Unit = {
    val found = offset.streams
    val expected = config.streams.toSet
    if (found.nonEmpty && found != expected) {
      throw new IllegalStateException(s"The checkpoint was written for Kinesis streams ${found.toSeq.sorted.mkString(", ")} " +
        s"but the query reads ${expected.toSeq.sorted.mkString(", ")}: use a new checkpoint location for other streams.")
    }
  }

  /**
   * Shards that may be fetched from `start`: not read to their end, and whose parents are (so a child's records
   * always come after all of its parents'). A parent that no longer exists expired past retention: it cannot
   * be read any more and does not hold its children back.
   */
  def readableShards(start: KinesisSourceOffset): Seq[ShardKey] = {
    val shards = discovery.shards()
    def finished(key: ShardKey) = start.get(key).contains(ShardEnd) || !shards.contains(key)
    shards.values.toSeq
      .filter(s => !start.get(s.key).contains(ShardEnd))
      .filter(s => s.parents.forall(p => finished(ShardKey(s.key.stream, p))))
      .map(_.key)
      .sorted
  }

  /**
   * Snapshot tasks by [[taskGroups]], each placed on the executor that owns the group's shards (where they were
   * prefetched last), so the same executor keeps reading them and the batch's task finds them in memory.
   */
  def groups(requests: Seq[SnapshotRequest], owners: Map[ShardKey, String]): Seq[(Seq[SnapshotRequest], Option[String])] =
    taskGroups(requests)(_.key).map(g => g -> FetchPlanner.ownerOf(g.map(_.key), owners))

  def taskGroups[A](items: Seq[A])(key: A => ShardKey): Seq[Seq[A]] = {
    val shards = discovery.shards()
    val perTask = config.shardsPerTaskFor(items.size, FetchPlanner.parallelism)
    FetchPlanner.taskGroups(items, perTask)(key, k => shards.get(k).map(_.startingHashKey).getOrElse(BigInt(0)))
  }
}

object FetchPlanner {
  /** Tasks Spark runs at once, as the driver sees it (1 when no session is active, e.g. in unit tests). */
  def parallelism: Int =
    org.apache.spark.sql.SparkSession.getActiveSession.map(_.sparkContext.defaultParallelism).getOrElse(1)

  val LatestSkewMillis = 1000L

  /** Where most of a group's shards were prefetched (ties: the first shard's executor). */
  def ownerOf(keys: Seq[ShardKey], owners: Map[ShardKey, String]): Option[String] = {
    val known = keys.flatMap(owners.get)
    if (known.isEmpty) None
    else Some(known.groupBy(identity).toSeq.sortBy { case (loc, seen) => (-seen.size, known.indexOf(loc)) }.head._1)
  }
  val HashSpace: BigInt = BigInt(2).pow(128)

  /**
   * Deterministic shard-to-task assignment by hash range: each stream's [0, 2^128) is cut into
   * ceil(shards / shardsPerTask) equal parts, and a task reads the shards whose starting hash key falls in its
   * part. A split's children start inside their parent's range, so they tend to stay with the parent's task.
   */
  def taskGroups[A](items: Seq[A], shardsPerTask: Int)(key: A => ShardKey, startingHashKey: ShardKey => BigInt): Seq[Seq[A]] =
    items.groupBy(a => key(a).stream).toSeq.sortBy(_._1).flatMap { case (_, inStream) =>
      val parts = math.max(1, (inStream.size + shardsPerTask - 1) / shardsPerTask)
      def start(a: A) = startingHashKey(key(a))
      inStream.groupBy(a => (start(a) * parts / HashSpace).toInt).toSeq.sortBy(_._1)
        .map(_._2.sortBy(a => (start(a), key(a).shardId)))
    }

  /** Each fetching shard's share of the trigger's read limit: (records, bytes), at least one record. */
  def budgets(limit: ReadLimit, shards: Int): (Long, Long) = {
    def share(total: Long) = math.max(1L, total / math.max(1, shards))
    limit match {
      case r: ReadMaxRows => (share(r.maxRows()), Long.MaxValue)
      case b: ReadMaxBytes => (Long.MaxValue, share(b.maxBytes()))
      case c: CompositeReadLimit =>
        c.getReadLimits.map(budgets(_, shards)).foldLeft((Long.MaxValue, Long.MaxValue)) {
          case ((r1, b1), (r2, b2)) => (math.min(r1, r2), math.min(b1, b2))
        }
      case _ => (Long.MaxValue, Long.MaxValue)
    }
  }
}
