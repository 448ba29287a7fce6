package io.github.sparkkinesis.source
package driver

import scala.collection.mutable

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging
import org.apache.spark.sql.connector.read.streaming._

/** Driver-side decisions that need no Spark job: first positions, which shards may be read, task groups. */
final class FetchPlanner(config: SourceConfig, discovery: ShardDiscovery) extends Logging {

  /** The first offset of a new query: `initialPosition` made concrete for every shard that exists now. */
  def initialOffset(nowMillis: Long): KinesisSourceOffset = {
    val shards = discovery.completeShards().values.toVector
    val positions: Seq[(ShardKey, ShardPosition)] = config.initialPosition match {
      case InitialPosition.Latest =>
        // Closed shards hold only records from before the start. Open ones from Kinesis' time at the start, which
        // its answers' dates bound from below (records put after the start arrive no earlier); without a date,
        // from ours, a second early for skew.
        val start = discovery.clock.kinesisMillisAtLeast(nowMillis).map(_ - FetchPlanner.LatestDateMarginMillis)
          .getOrElse(nowMillis - FetchPlanner.LatestSkewMillis)
        shards.map(s => s.key -> (if (s.closed) ShardEnd else AtTimestamp(start)))
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

  /**
   * Per-shard ends name shards that exist (or existed: closed shards are listed until they expire), none before
   * where the read starts; checked before anything is read.
   */
  def checkEnds(end: EndPosition.PerShard, start: KinesisSourceOffset): Unit = {
    val shards = discovery.completeShards().keySet
    val unknown = end.positions.keySet -- shards
    if (unknown.nonEmpty) {
      throw new IllegalArgumentException(s"Option 'endingPosition' names shards that do not exist: " +
        s"${unknown.toSeq.sorted.mkString(", ")}; existing shards: ${shards.toSeq.sorted.mkString(", ")}")
    }
    for ((key, ending @ After(_, _)) <- end.positions.toSeq.sortBy(_._1); After(seq, sub) <- start.get(key)) {
      if (executor.SequenceNumbers.isAfter(ending, seq, sub)) {
        throw new IllegalArgumentException(s"Option 'endingPosition' ends shard $key at $ending, before the read " +
          s"starts there (after $seq, sub-record $sub): give an end at or after the start.")
      }
    }
  }

  /** A checkpoint must belong to the streams the query reads. */
  def checkStreams(offset: KinesisSourceOffset): Unit = {
    val found = offset.streams
    val expected = config.streams.toSet
    if (found.nonEmpty && found != expected) {
      throw new IllegalStateException(
        s"The checkpoint was written for Kinesis streams ${found.toSeq.sorted.mkString(", ")} " +
          s"but the query reads ${expected.toSeq.sorted.mkString(", ")}: use a new checkpoint location for other streams.")
    }
  }

  /**
   * The last answer of `readableShards`, and the listing and the offset's ended shards it was for: only these
   * decide it, so a batch's end (which moves positions, and ends a shard only with a relisting after it) keeps it.
   */
  @volatile private var readable: Option[(Map[ShardKey, ShardMeta], Set[ShardKey], Seq[ShardKey])] = None

  /** Shards already reported lost, so a query going on past them (failOnDataLoss=false) warns once each. */
  private val reportedLost = mutable.Set.empty[ShardKey]

  /**
   * Shards that may be fetched from `start`: not read to their end, and whose parents are (so a child's records
   * always come after all of its parents'). A parent gone from ListShards counts as finished: it was read to its
   * end and dropped from the offset, it expired before the query saw it, or it expired with records unread, which
   * is reported per `failOnDataLoss` first.
   */
  def readableShards(start: KinesisSourceOffset): Seq[ShardKey] = {
    val shards = discovery.shards()
    reportExpired(start, shards)
    // Idle triggers (four a second) and most batches ask with the same listing and ended shards: the same answer.
    val ended = start.ended
    readable match {
      case Some((s, e, keys)) if (s eq shards) && ((e eq ended) || e == ended) => return keys
      case _ =>
    }
    def finished(key: ShardKey) = start.get(key).contains(ShardEnd) || !shards.contains(key)
    // Strict (`toVector`): on Scala 2.12 `values.toSeq` is a lazy Stream, and what is planned here goes to tasks.
    val keys = shards.values.toVector
      .filter(s => !start.get(s.key).contains(ShardEnd))
      .filter(s => s.parents.forall(p => finished(ShardKey(s.key.stream, p))))
      .map(_.key)
      .sorted
    readable = Some((shards, ended, keys))
    keys
  }

  /**
   * The offset after a batch: `start` moved on by the batch's `advanced` shards, with the shards listed now that
   * it does not hold added at their trim horizon and the ones no longer listed dropped (see
   * [[FetchPlanner.nextOffset]]), from a complete listing. The caller invalidates the listing when a shard was
   * seen to end, so the ended shard's children are in this offset.
   */
  def endOffset(start: KinesisSourceOffset, advanced: Seq[(ShardKey, ShardPosition)]): KinesisSourceOffset = {
    val shards = discovery.plannedShards()
    reportExpired(start, shards)
    FetchPlanner.nextOffset(start, advanced, shards)
  }

  private def reportExpired(start: KinesisSourceOffset, shards: Map[ShardKey, ShardMeta]): Unit =
    if (!FetchPlanner.sameShards(start, shards)) for {
      (key, position) <- FetchPlanner.expiredUnread(start, shards) if !reportedLost(key)
    } {
      val unread = position match {
        case _: After => s"its records ${DataLoss.show(position)} were never read"
        case _ => s"it was never read (its position is ${DataLoss.show(position)})"
      }
      DataLoss(
        config,
        key,
        s"the shard is no longer listed by ListShards (it expired past the stream's retention) " +
          s"and $unread",
        "without it: its child shards are read from their start"
      )
      reportedLost += key
    }

  /**
   * Snapshot tasks by [[taskGroups]], each placed on the executor that owns the group's shards (where they were
   * prefetched last), so the same executor keeps reading them and the batch's task finds them in memory.
   */
  def groups(requests: Seq[SnapshotRequest], owners: Map[ShardKey, String]): Seq[(Seq[SnapshotRequest], Option[String])] =
    taskGroups(requests)(_.key).map(g => g -> FetchPlanner.ownerOf(g.map(_.key), owners))

  /** The last answer of [[keyGroups]]: for the same shards, listing, parallelism and owners, the same groups. */
  @volatile private var lastKeyGroups
      : Option[(Seq[ShardKey], Map[ShardKey, ShardMeta], Int, Map[ShardKey, String], Seq[(Seq[ShardKey], Option[String])])] =
    None

  /**
   * [[groups]] by shard: the shards' task groups and owners, worked out again only when the shards, the listing,
   * Spark's parallelism or an owner changed (a trigger at 10,000 shards otherwise spent milliseconds on the
   * hash-range arithmetic and the owners' counts to find the groups of the trigger before).
   */
  def keyGroups(keys: Seq[ShardKey], owners: Map[ShardKey, String]): Seq[(Seq[ShardKey], Option[String])] = {
    val shards = discovery.shards()
    val parallelism = FetchPlanner.parallelism
    lastKeyGroups match {
      case Some((k, s, p, o, groups)) if (k eq keys) && (s eq shards) && p == parallelism && (o eq owners) => groups
      case _ =>
        val groups = taskGroups(keys)(identity).map(g => g -> FetchPlanner.ownerOf(g, owners))
        lastKeyGroups = Some((keys, shards, parallelism, owners, groups))
        groups
    }
  }

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

  /** `latest` without a `Date` header to learn Kinesis' clock from: our clock, this much early for skew. */
  val LatestSkewMillis = 1000L
  /**
   * `latest` from a `Date` header: this much before the bound it gives, for the clocks of Kinesis' hosts (the one
   * that dates an answer, the one that stamps a record) that need not agree to the millisecond.
   */
  val LatestDateMarginMillis = 250L
  /**
   * On agreeing clocks, how long before the start `latest` may reach back at most: a date's truncation to its
   * second, a call's round trip, the margin. Records that arrived earlier are never read by a `latest` start.
   */
  val LatestLookBackMillis = 2000L

  /** Where most of a group's shards were prefetched (ties: the first shard's executor). */
  def ownerOf(keys: Seq[ShardKey], owners: Map[ShardKey, String]): Option[String] = {
    val known = keys.flatMap(owners.get)
    if (known.isEmpty) None
    else Some(known.groupBy(identity).toSeq.sortBy { case (loc, seen) => (-seen.size, known.indexOf(loc)) }.head._1)
  }
  val HashSpace: BigInt = BigInt(2).pow(128)

  /**
   * Shards of the offset not read to their end that ListShards no longer lists: Kinesis lists a closed shard until
   * retention passed its last record, so whatever the offset had not read of it is gone.
   */
  def expiredUnread(start: KinesisSourceOffset, listed: Map[ShardKey, ShardMeta]): Seq[(ShardKey, ShardPosition)] =
    start.positions.iterator.filter { case (key, position) => position != ShardEnd && !listed.contains(key) }
      .toVector.sortBy(_._1)

  /**
   * The offset holds exactly the shards ListShards lists, plus those the batch reads: a shard listed and not yet
   * read is added at its trim horizon (absent, it would read the same), so a shard the query saw cannot later
   * expire unread without notice. A shard no longer listed is dropped unless the batch reads it: read to its end,
   * nothing needs it any more, since its listed children are in the offset themselves and a parent absent from
   * both counts as finished ([[FetchPlanner.readableShards]]); lost, it was reported. So the offset stays as small
   * as the listing (closed shards stay listed for the stream's retention), however often the stream reshards.
   */
  def nextOffset(
      start: KinesisSourceOffset,
      advanced: Seq[(ShardKey, ShardPosition)],
      listed: Map[ShardKey, ShardMeta]): KinesisSourceOffset =
    // Almost always: the offset holds the listed shards already, nothing to add or drop.
    if (sameShards(start, listed)) start.movedBy(advanced)
    else {
      val moved = advanced.map(_._1).toSet
      val kept = start.positions.filter { case (key, _) => listed.contains(key) || moved(key) }
      val added = listed.keys.filterNot(start.positions.contains).map(_ -> (TrimHorizon: ShardPosition))
      KinesisSourceOffset(kept ++ added ++ advanced)
    }

  /** Whether `offset` holds exactly the `listed` shards (a key lookup each, no copies). */
  def sameShards(offset: KinesisSourceOffset, listed: Map[ShardKey, ShardMeta]): Boolean =
    (offset.holdsListing eq listed) || {
      val same = offset.positions.size == listed.size && listed.keysIterator.forall(offset.positions.contains)
      if (same) offset.holdsListing = listed
      same
    }

  /**
   * Deterministic shard-to-task assignment by hash range: each stream's [0, 2^128) is cut into
   * ceil(shards / shardsPerTask) equal parts, and a task reads the shards whose starting hash key falls in its
   * part. A split's children start inside their parent's range, so they tend to stay with the parent's task.
   */
  def taskGroups[A](items: Seq[A], shardsPerTask: Int)(
      key: A => ShardKey,
      startingHashKey: ShardKey => BigInt): Seq[Seq[A]] =
    items.groupBy(a => key(a).stream).toSeq.sortBy(_._1).flatMap { case (_, inStream) =>
      val parts = math.max(1, (inStream.size + shardsPerTask - 1) / shardsPerTask)
      def start(a: A) = startingHashKey(key(a))
      inStream.groupBy(a => (start(a) * parts / HashSpace).toInt).toSeq.sortBy(_._1)
        .map(_._2.sortBy(a => (start(a), key(a).shardId)))
    }

  /**
   * What the trigger's read limit asks: at most so many records and bytes, at least so many records (Spark's
   * `ReadMinRows`, with its delay). `ReadAllAvailable` anywhere in it lifts every limit, as in Kafka's source.
   */
  def limitsOf(limit: ReadLimit): TriggerLimits = {
    val parts = limit match {
      case c: CompositeReadLimit => c.getReadLimits.toSeq
      case one => Seq(one)
    }
    if (parts.exists(_.isInstanceOf[ReadAllAvailable])) TriggerLimits(None, None, None)
    else {
      def min(values: Seq[Long]) = if (values.isEmpty) None else Some(values.min)
      TriggerLimits(
        min(parts.collect { case r: ReadMaxRows => r.maxRows() }),
        min(parts.flatMap(SparkLineSource.bytesOf)),
        parts.collectFirst { case m: ReadMinRows => m })
    }
  }

}

/** A trigger's read limit, read (see [[FetchPlanner.limitsOf]]). */
final case class TriggerLimits(maxRecords: Option[Long], maxBytes: Option[Long], minRecords: Option[ReadMinRows])
