package io.github.sparkkinesis.source

import java.net.InetAddress

import io.github.sparkkinesis.client.CallCounts
import org.apache.spark.{Partition, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.rdd.RDD
import io.github.sparkkinesis.source.executor.{FeedState, Prefetcher, ShardFeed, StandingGroups}

/**
 * A shard the next batch may read, from where, and its share of the trigger's read limit; its hash key range
 * (misplaced KPL aggregates are skipped) and whether the listing shows it closed, as the driver knows them.
 */
final case class SnapshotRequest(
    key: ShardKey,
    from: ShardPosition,
    maxRecords: Long,
    maxBytes: Long,
    hashKeys: Option[HashKeySpan] = None,
    closed: Boolean = false)

object SnapshotRequest {
  /** A request for `key` as the listing `shards` describes it. */
  def of(
      shards: Map[ShardKey, ShardMeta],
      key: ShardKey,
      from: ShardPosition,
      maxRecords: Long,
      maxBytes: Long): SnapshotRequest = {
    val meta = shards.get(key)
    SnapshotRequest(key, from, maxRecords, maxBytes, meta.map(_.hashKeys), meta.exists(_.closed))
  }
}

/**
 * What an executor holds for one shard past `from` (see [[FeedState]]); `location` is where it is held; `heldTo`
 * where its feed has read to, beyond the request's limits (the source's latest offset, when known).
 */
final case class ShardSnapshot(
    key: ShardKey,
    from: ShardPosition,
    state: FeedState,
    location: String,
    heldTo: Option[ShardPosition] = None) {
  def last: ShardPosition = state.last
  def advanced: Boolean = state.last != from
  /** The shard as a batch that takes only `share` of it would leave it. */
  def cut(share: FeedState): ShardSnapshot = copy(state = share)
  /** The shard as a batch that takes none of it would leave it. */
  def nothingTaken: ShardSnapshot = copy(state = state.copy(last = from, records = 0, bytes = 0, caughtUp = false))
}

object ShardSnapshot {
  /**
   * A shard at its tip with nothing past the request's start, as a task at `location` reports it. A task leaves
   * such shards out of its result and the driver puts them back ([[SnapshotJob.run]]): most shards of a large
   * stream are quiet on most triggers, and each one's state cost Java serialization on the executor and again on
   * the driver (at 5,000 shards, a tenth of them with a record a second, more CPU than the driver's planning).
   */
  def quiet(request: SnapshotRequest, location: String): ShardSnapshot =
    ShardSnapshot(
      request.key,
      request.from,
      FeedState(request.from, 0L, 0L, Some(0L), caughtUp = true, 0L),
      location,
      Some(request.from))

  /** A task's `reported` shards and its quiet ones, in the order of its `requests`. */
  def withQuiet(requests: Seq[SnapshotRequest], reported: Seq[ShardSnapshot], location: String): Seq[ShardSnapshot] =
    if (reported.size == requests.size) reported
    else {
      val byKey = reported.iterator.map(s => s.key -> s).toMap
      requests.map(r => byKey.getOrElse(r.key, quiet(r, location)))
    }
}

/**
 * One executor's view when a snapshot task ran: its SDK call counts, its re-reads, its enhanced fan-out counts,
 * the KPL aggregates it did not split and its buffer, for metrics;
 * whether it will signal the driver when what it holds changes ([[DriverSignal]]).
 */
final case class ExecutorStats(
    location: String,
    calls: CallCounts,
    reReads: Long,
    heldBytes: Long,
    bufferLimit: Long,
    signalsDriver: Boolean = false,
    fanOut: FanOutCounts = FanOutCounts.zero,
    aggregates: AggregateCounts = AggregateCounts.zero)

/**
 * A snapshot task's answer: its shards that are not quiet and its executor's view; or `missed`: the task was sent
 * only what changed since a generation its executor does not hold ([[executor.StandingGroups]]), and answers
 * nothing.
 */
final case class SnapshotAnswer(snapshots: Seq[ShardSnapshot], stats: ExecutorStats, missed: Boolean = false)

/**
 * How long a snapshot task waits. It returns once every shard of its group has been polled at least once and
 * either some shard has records or `lingerNanos` passed (an idle stream: the task waits for data instead of the
 * driver asking again and again). While shards are behind their tip (a catch-up), it gathers records for up to
 * `fillNanos` unless the shards catch up or the buffer is half full first: a catch-up runs as fewer, larger
 * batches, each paying Spark's fixed cost of a micro-batch once. With `untilCaughtUp` (batch reads) it returns
 * only when every shard is at its tip or cut-off. Never past `maxFetchDuration`, whatever Kinesis does.
 */
final case class SnapshotWait(lingerNanos: Long, untilCaughtUp: Boolean, fillNanos: Long = 0L)

/**
 * What one snapshot job asks of every task: the source, where feeds stop (AvailableNow and batch reads, see
 * [[RunEnd]]), the wait, batch-read spilling, and whether the driver listens for the executors' signals.
 */
final case class SnapshotSpec(
    sourceId: String,
    config: SourceConfig,
    runEnd: Option[RunEnd],
    until: SnapshotWait,
    spill: Boolean = false,
    driverListens: Boolean = false)

/**
 * The short Spark job `latestOffset` runs: each task makes sure its executor prefetches its group of shards
 * from the batch's start (starting the feeds the first time, dropping what the last batch committed) and reports
 * what is buffered, so the batch is planned from records that exist and sit where its tasks will run.
 */
object SnapshotJob {
  private val JobDescription = "spark.job.description"
  /**
   * The longest a snapshot waits for shards' first answers (a GetShardIterator and a GetRecords each, tens of
   * milliseconds on Kinesis). Past a second the shards still waiting are ones in line for a call slot behind
   * thousands of others, not slow ones: waiting longer delayed the whole first batch (at 10,000 shards it always
   * waited 2 s) for records the next batch reads anyway.
   */
  val FirstPollWait: java.time.Duration = java.time.Duration.ofSeconds(1)

  /**
   * When a snapshot task's wait may look at its feeds again, after a look from `startedNanos` to `endedNanos`: at
   * once after a short look; after a long one (a millisecond at 10,000 shards), no sooner than [[LookSpacing]]
   * times its length from its start, so looking takes at most that share of the wait. At a start every first answer
   * changes something, and looks back to back took most of a core from the calls the task waited for. A change
   * meanwhile is seen at the next look (the wait wakes at least every 20 ms).
   */
  def nextLook(startedNanos: Long, endedNanos: Long): Long = {
    val took = endedNanos - startedNanos
    if (took < SpacedLookNanos) endedNanos else startedNanos + LookSpacing * took
  }
  val LookSpacing = 10L
  /** Looks shorter than this (a few thousand feeds) go again as soon as something changes. */
  val SpacedLookNanos: Long = java.time.Duration.ofMillis(1).toNanos / 5

  /** How Spark names an executor in preferred locations. */
  def executorLocation(): String = {
    val env = SparkEnv.get
    s"executor_${InetAddress.getLocalHost.getHostAddress}_${env.executorId}"
  }

  /**
   * `why`: shown beside the job's name in the UI when it is not the usual look for new records. With `sent` (a
   * stream's triggers), each task is sent only the requests of its group that changed since its executor's last
   * task of that group; a task that lands where the group is not held is asked again in full, in a second job.
   */
  def run(
      sc: SparkContext,
      spec: SnapshotSpec,
      groups: Seq[(Seq[SnapshotRequest], Option[String])],
      why: String = "",
      sent: Option[driver.SentGroups] = None): (Seq[ShardSnapshot], Seq[ExecutorStats]) = {
    // A task's answer is its group's (runJob keeps the partitions' order): its quiet shards come back here.
    val answered = answers(sc, spec, groups, why, sent).iterator.zip(groups.iterator).map { case (a, (requests, _)) =>
      (ShardSnapshot.withQuiet(requests, a.snapshots, a.stats.location), a.stats)
    }.toVector
    (answered.flatMap(_._1), answered.map(_._2))
  }

  /**
   * [[run]]'s answers as the tasks gave them, one per group in the groups' order: each with the group's shards
   * that are not quiet, and its executor (where the group's shards are held now). A stream's trigger looks at these
   * alone: at 10,000 shards the quiet ones were put back and looked at again several times a trigger.
   */
  def answers(
      sc: SparkContext,
      spec: SnapshotSpec,
      groups: Seq[(Seq[SnapshotRequest], Option[String])],
      why: String = "",
      sent: Option[driver.SentGroups] = None): Vector[SnapshotAnswer] = {
    if (groups.isEmpty) return Vector.empty
    val asks = sent.fold(groups.map(g => SnapshotAsk.full(-1, 0L, g._1)).toVector)(_.asks(groups.map(_._1)))
    try {
      val first = runAsks(sc, spec, asks.zip(groups.map(_._2)), why)
      // Only a stream's asks (`sent`) can miss: a full ask never does.
      val again = first.indices.filter(first(_).missed).map(i => i -> sent.get.full(i, groups(i)._1)).toVector
      val second = runAsks(sc, spec, again.map { case (i, ask) => ask -> groups(i)._2 }, "again in full")
      val redone = again.map(_._1).zip(again.map(_._2).zip(second)).toMap
      val settled = asks.indices.map(i => redone.getOrElse(i, asks(i) -> first(i)))
      sent.foreach(s =>
        settled.iterator.zip(groups.iterator).foreach { case ((ask, _), (requests, _)) =>
          s.answered(ask, requests)
        })
      settled.map(_._2).toVector
    } catch {
      case e: Throwable =>
        sent.foreach(_.reset()) // what the executors hold is not known any more
        throw e
    }
  }

  private def runAsks(
      sc: SparkContext,
      spec: SnapshotSpec,
      asks: Seq[(SnapshotAsk, Option[String])],
      why: String): Vector[SnapshotAnswer] =
    if (asks.isEmpty) Vector.empty
    else {
      val rdd = new SnapshotRDD(sc, spec, asks)
      // Named in the UI; the query's own description (batch id) is put back for the batch that follows.
      val previous = sc.getLocalProperty(JobDescription)
      val shards = asks.map(_._1.size).sum
      val changed = asks.map(_._1.changed.size).sum
      val what = if (changed == shards) s"$shards shards" else s"$shards shards, $changed changed"
      sc.setJobDescription(s"Kinesis fetch ($what${if (why.isEmpty) "" else s", $why"})")
      try sc.runJob(rdd, CollectSnapshots, rdd.partitions.indices).toVector.flatten
      finally sc.setLocalProperty(JobDescription, previous)
    }

  /**
   * Asks the executors at `locations` to drop a stopped query's feeds now: best effort and not waited for (a
   * feed missed here is dropped once unused, see [[Prefetcher]]).
   */
  def release(sc: SparkContext, sourceId: String, locations: Seq[String]): Unit =
    if (!sc.isStopped && locations.nonEmpty) {
      // Outside the stopping query's job group and tags: Spark cancels those as the query stops.
      val keys = Seq("spark.jobGroup.id", "spark.job.tags", "spark.job.interruptOnCancel", JobDescription)
      val saved = keys.map(k => k -> sc.getLocalProperty(k))
      keys.foreach(sc.setLocalProperty(_, null))
      sc.setJobDescription("Kinesis: free a stopped query's prefetch buffers")
      try {
        val rdd = new ReleaseRDD(sc, sourceId, locations)
        sc.submitJob(rdd, IgnoreRows, rdd.partitions.indices, (_: Int, _: Unit) => (), ())
      } finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) }
    }

  /** Runs in a task: the group's feeds, waited on per `until`, and their state. */
  def snapshot(spec: SnapshotSpec, ask: SnapshotAsk): SnapshotAnswer = {
    import spec._
    val started = System.nanoTime()
    val location = executorLocation()
    // Strict (a Vector): a lazy Seq (a Stream on Scala 2.12) would carry the feeds into the task's result.
    val feeds = StandingGroups.resolve(sourceId, ask)(
      r => Prefetcher.feedFor(sourceId, config, r.key, r.from, runEnd, spill, r.hashKeys, r.closed),
      Prefetcher.kept(sourceId, _)) match {
      case Some(resolved) => resolved
      case None => return SnapshotAnswer(Nil, executorStats(spec, location, signals = false), missed = true)
    }
    val lingerEnd = started + math.min(until.lingerNanos, config.maxFetchDuration.toNanos)
    val fillEnd = started + math.min(until.fillNanos, config.maxFetchDuration.toNanos)
    val halfBuffer = Prefetcher.bufferLimit(config) / 2
    val firstPollEnd = started + math.min(SnapshotJob.FirstPollWait.toNanos, config.maxFetchDuration.toNanos)
    // What the feeds offer, looked at again only when a call changed something (see Prefetcher.changes): the
    // wait re-checks its time limits every few milliseconds, and a thousand feeds are not scanned each time.
    var seen = -1L
    var nextLook = 0L
    var failed, hasData, allPolled, allCaughtUp, allFinished = false
    Prefetcher.await(sourceId, started + config.maxFetchDuration.toNanos) {
      val changes = Prefetcher.changes(sourceId)
      val before = System.nanoTime()
      if (changes != seen && before >= nextLook) {
        seen = changes
        // One pass over the feeds: with traffic on a tenth of 10,000 shards something changes every few
        // milliseconds, and five passes a change were most of a snapshot task's CPU.
        var anyFailed, anyData = false
        var everyPolled, everyCaughtUp, everyFinished = true
        var i = 0
        while (i < feeds.length) {
          val (r, f) = feeds(i)
          val look = f.look(r.from)
          anyFailed ||= (look & ShardFeed.Failed) != 0
          anyData ||= (look & ShardFeed.HasData) != 0
          everyPolled &&= (look & ShardFeed.Polled) != 0
          val done = (look & ShardFeed.Finished) != 0
          everyCaughtUp &&= done || (look & ShardFeed.CaughtUp) != 0
          everyFinished &&= done // nothing more will come: no reason to wait
          i += 1
        }
        failed = anyFailed; hasData = anyData
        allPolled = everyPolled; allCaughtUp = everyCaughtUp; allFinished = everyFinished
        nextLook = SnapshotJob.nextLook(before, System.nanoTime())
      }
      val now = System.nanoTime()
      def filled = now >= fillEnd || allCaughtUp || Prefetcher.heldBytes >= halfBuffer
      // A shard not answered yet is waited for briefly (a first batch should not miss its first records), but
      // never for long: at thousands of shards some wait their turn for a call slot.
      def polled = allPolled || now >= firstPollEnd
      failed || allFinished || (
        if (until.untilCaughtUp) allCaughtUp
        else polled && (if (hasData) filled else now >= lingerEnd))
    }
    // Armed before the feeds are read: a change from here on is either in this snapshot or signalled (or both).
    val signals = driverListens && Prefetcher.armDriverSignal(sourceId)
    val snapshots = feeds.flatMap { case (r, feed) =>
      feed.failed.foreach(e => throw failure(r.key, e))
      if (feed.quietAt(r.from)) None
      else {
        val snapshot = ShardSnapshot(r.key, r.from, feed.state(r.maxRecords, r.maxBytes), location, Some(feed.heldTo))
        if (snapshot == ShardSnapshot.quiet(r, location)) None else Some(snapshot)
      }
    }
    SnapshotAnswer(snapshots, executorStats(spec, location, signals))
  }

  private def executorStats(spec: SnapshotSpec, location: String, signals: Boolean): ExecutorStats = {
    import spec._
    ExecutorStats(
      location,
      Prefetcher.tallyOf(sourceId).snapshot(),
      Prefetcher.reReadCount(sourceId),
      Prefetcher.heldBytesOf(sourceId),
      Prefetcher.bufferLimit(config),
      signals,
      Prefetcher.fanOutTallyOf(sourceId).snapshot(),
      Prefetcher.aggregateCounts(sourceId)
    )
  }

  /** The feed's own failure, unless it already says which shard (stream not found, data loss, denied access). */
  private[source] def failure(key: ShardKey, e: Throwable): Throwable = e match {
    case _: IllegalStateException | _: IllegalArgumentException => e
    case other => new IllegalStateException(s"Reading Kinesis shard $key failed: ${other.getMessage}", other)
  }
}

/**
 * The jobs' functions are named classes, not lambdas: Spark's closure cleaner skips them, where for a lambda it
 * reads its enclosing class's bytecode with ASM on every job — once a second on an idle stream. The snapshot's
 * takes the task context too: `SparkContext.runJob` wraps a function of the rows alone in a lambda of its own and
 * cleans that (11 % of the stream thread's samples in a 1 KiB × 128-shard catch-up, 2026-11-28-copies).
 */
private object CollectSnapshots
  extends ((TaskContext, Iterator[SnapshotAnswer]) => Vector[SnapshotAnswer])
  with Serializable {
  override def apply(context: TaskContext, it: Iterator[SnapshotAnswer]): Vector[SnapshotAnswer] = it.toVector
}

private object IgnoreRows extends (Iterator[Unit] => Unit) with Serializable {
  override def apply(it: Iterator[Unit]): Unit = ()
}

/** Its ask travels as bytes ([[SnapshotRequests]]), read back in the task. */
private final class SnapshotPartition(val index: Int, ask: SnapshotAsk, val location: Option[String])
  extends Partition {
  private val encoded: Array[Byte] = SnapshotRequests.encodeAsk(ask)
  def decoded: SnapshotAsk = SnapshotRequests.decodeAsk(encoded)
}

/**
 * `asks` stays on the driver: each partition carries its own, and serialized with the RDD (the task binary every
 * task gets) they went out twice, the whole stream's to every task (2.4 MiB a job at 10,000 shards).
 */
private final class SnapshotRDD(
    sc: SparkContext,
    spec: SnapshotSpec,
    @transient private val asks: Seq[(SnapshotAsk, Option[String])])
  extends RDD[SnapshotAnswer](sc, Nil) {

  override protected def getPartitions: Array[Partition] =
    asks.zipWithIndex.map { case ((ask, location), i) => new SnapshotPartition(i, ask, location): Partition }.toArray

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[SnapshotPartition].location.toSeq

  override def compute(split: Partition, context: TaskContext): Iterator[SnapshotAnswer] =
    Iterator.single(SnapshotJob.snapshot(spec, split.asInstanceOf[SnapshotPartition].decoded))
}

private final class ReleasePartition(val index: Int, val location: String) extends Partition

private final class ReleaseRDD(sc: SparkContext, sourceId: String, locations: Seq[String]) extends RDD[Unit](sc, Nil) {
  override protected def getPartitions: Array[Partition] =
    locations.zipWithIndex.map { case (l, i) => new ReleasePartition(i, l): Partition }.toArray

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    Seq(split.asInstanceOf[ReleasePartition].location)

  override def compute(split: Partition, context: TaskContext): Iterator[Unit] = {
    Prefetcher.release(sourceId)
    Iterator.empty
  }
}
