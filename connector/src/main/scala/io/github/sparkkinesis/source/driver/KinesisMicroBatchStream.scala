package io.github.sparkkinesis.source
package driver

import java.util.{Optional, UUID}

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.options.{KinesisOptionException, KinesisOptions}
import io.github.sparkkinesis.options.KinesisOptions.{
  MaxBytesPerTrigger,
  MaxRecordsPerShardPerTrigger,
  MaxRecordsPerTrigger,
  MaxTriggerDelay,
  MinRecordsPerTrigger
}
import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.SparkContext
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import io.github.sparkkinesis.source.executor.{KinesisPartitionReaderFactory, Prefetcher}

/**
 * The streaming source. Executors prefetch their shards continuously ([[Prefetcher]]); `latestOffset` takes a
 * snapshot of what they hold and plans exactly that (docs/design/offsets.md), so the offset log says what each
 * batch holds and the batch's tasks, placed where the records are, read them from memory.
 *
 * It has the methods of real-time mode, but Spark is told so only by the subclass the Spark 4 build makes where
 * Spark has that mode (4.1+, `SparkLineSource.microBatchStream`): this class itself loads on Spark 3.5 and 4.0.
 */
class KinesisMicroBatchStream(config: SourceConfig, checkpointLocation: String)
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics with Logging {

  import KinesisMicroBatchStream._

  private val sourceId = UUID.randomUUID().toString
  private val discovery = new ShardDiscovery(config)
  private val planner = new FetchPlanner(config, discovery)
  private val progress = new SourceProgress(SourceProgress.modeOf(config), config.streams.size)
  /** `Trigger.AvailableNow`: when the run started (this JVM's clock), and where its feeds stop (see [[RunEnd]]). */
  private var availableNowStart: Option[Long] = None
  private var runEnd: Option[RunEnd] = None
  private def availableNow = availableNowStart.isDefined
  /** `endingPosition` per shard (AvailableNow): each named shard is read up to its end and no further. */
  private val shardEnds = config.endingPosition.collect { case e: EndPosition.PerShard => e }
  private var shardEndsChecked = false
  private var lastAdvanced = true
  private var lastBehind = false
  private var lastSnapshotNanos = 0L
  private val signal = new DriverSignal(sourceId)
  /** What the executors hold of each snapshot group: a trigger sends them only what changed. */
  private val sentGroups = new SentGroups
  /** The snapshot requests of the last trigger: a trigger builds only those of the shards the last batch moved. */
  private val standing = new StandingRequests
  /** Where each snapshot group (by index) was last answered, with its shards then: see [[noteOwners]]. */
  private var answeredAt = Vector.empty[(Seq[ShardKey], String)]
  /** Signals counted when the last snapshot started, and whether every executor of that snapshot signals. */
  private var signalsSeen = 0L
  private var executorsSignal = false
  /** The shards the last snapshot read, sorted as `readableShards` gives them (often the very same instance). */
  private var lastReadable: Seq[ShardKey] = Nil
  /** Where each shard is prefetched: its snapshot and batch tasks go there. */
  private var owners = Map.empty[ShardKey, String]
  /** The groups behind the last offset returned: the batch's tasks are cut exactly as the snapshot's were. */
  private var lastPlan: Option[LastPlan] = None
  /** Where the executors' feeds had read to at the last snapshot: the progress report's `latestOffset`. */
  @volatile private var held: Option[KinesisSourceOffset] = None
  /**
   * `minRecordsPerTrigger`: when the last batch of this run was planned (or the run's first snapshot taken), which
   * `maxTriggerDelay` counts from; and while a batch is held back, when the delay runs out.
   */
  private var batchClock: Option[Long] = None
  private var holdEnds: Option[Long] = None
  /** The offsets Spark hands back as JSON, found without parsing them again (see [[KnownOffsets]]). */
  private val known = new KnownOffsets(KnownOffsetsKept)

  /** `consumerMode=efo`: this query's consumers, resolved before the first snapshot (see [[readConfig]]). */
  private val consumers = config.fanOut.map(new FanOutConsumers(config, _, derivedConsumerName(checkpointLocation)))
  @volatile private var resolved: Option[SourceConfig] = None

  /** Real-time mode (`Trigger.RealTime`): tasks read until Spark ends the batch; see [[RealTimeReader]]. */
  @volatile private var realTime = false
  /** The start of the real-time batch running: its end is this moved on by what the tasks read. */
  private var realTimeStart: Option[KinesisSourceOffset] = None

  @volatile private var initial: Option[KinesisSourceOffset] = None
  @volatile private var context: Option[SparkContext] = None

  /** Spark asks again on every trigger until a first batch runs: the checkpoint's file is read once. */
  override def initialOffset(): Offset = synchronized {
    initial.getOrElse {
      val offset =
        new InitialOffsetStore(checkpointLocation).getOrCreate(planner.initialOffset(System.currentTimeMillis()))
      initial = Some(offset)
      offset
    }
  }

  /**
   * "Nothing new". Before the first batch Spark runs a batch whenever the source returns any offset (nothing is
   * committed to compare it with), so there the answer is null: an idle stream gets no empty first batch.
   */
  private def unchanged(start: KinesisSourceOffset): Offset = if (initial.contains(start)) null else start

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("the Kinesis source is read with latestOffset(start, limit)")

  override def getDefaultReadLimit: ReadLimit = {
    val limits =
      config.minRecordsPerTrigger.map(ReadLimit.minRows(_, config.triggerDelay.toMillis)).toSeq ++
        config.maxRecordsPerTrigger.map(ReadLimit.maxRows) ++ config.maxBytesPerTrigger.map(SparkLineSource.maxBytes)
    limits match {
      case Seq() => ReadLimit.allAvailable()
      case Seq(one) => one
      case many => ReadLimit.compositeLimit(many.toArray)
    }
  }

  override def reportLatestOffset(): Offset = held.orNull

  override def prepareForTriggerAvailableNow(): Unit = {
    availableNowStart = Some(System.currentTimeMillis())
    // The run reads shards as a listing made after its start shows them (a closed one to its end).
    discovery.invalidate()
    logInfo("Trigger.AvailableNow: reading each shard up to the tip its first read after the start finds, or a " +
      "record that surely arrived after the start")
  }

  /** The options as executors read with them: with the ARNs of the enhanced fan-out consumers, once ACTIVE. */
  private def readConfig: SourceConfig = synchronized {
    resolved.getOrElse {
      val withArns = (consumers, config.fanOut) match {
        case (Some(c), Some(fanOut)) =>
          val arns = c.resolve()
          progress.registeredConsumers(arns.size)
          config.copy(fanOut = Some(fanOut.copy(consumerArns = arns)), realTime = realTime)
        case _ => config.copy(realTime = realTime)
      }
      resolved = Some(withArns)
      withArns
    }
  }

  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    // Spark prepares an AvailableNow run before it asks for its first batch: any other trigger has no end.
    if (!availableNow) SourceConfig.refuseEndingPositionForStreaming(config)
    val start = KinesisSourceOffset.from(startOffset)
    // Real-time batches are planned from their start alone and end where their tasks got to (mergeOffsets).
    if (realTime) return start
    planner.checkStreams(start)
    if (!shardEndsChecked) {
      shardEnds.foreach(planner.checkEnds(_, start))
      shardEndsChecked = true
    }
    // A shard at its named end is done; its children stay unread, as they come after it.
    val readable = shardEnds.fold(planner.readableShards(start))(e =>
      planner.readableShards(start).filterNot(k => e.reached(k, start.get(k))))
    // After a listing made since the start: its answers' dates bound Kinesis' clock at the start.
    if (runEnd.isEmpty) runEnd = availableNowStart.map(RunEnd.startedAt(_, discovery.clock, config.endingPosition))
    if (readable.isEmpty) return unchanged(start)
    val listening = signal.open()
    // Idle (the last snapshot found nothing): no Spark job until an executor signals a change, the shards change,
    // or IdleSnapshotInterval passes (feeds are kept alive and metrics refreshed). A trigger waits IdleTriggerWait
    // for a signal, then reports nothing new. Without signals, a snapshot waits on the executors (IdleWait).
    // A batch held back by minRecordsPerTrigger waits the same way, until its delay runs out.
    val idle = !lastAdvanced && !availableNow && executorsSignal &&
      ((readable eq lastReadable) || readable == lastReadable) && !holdEnds.exists(_ <= System.currentTimeMillis())
    val periodic = idle && System.nanoTime() - lastSnapshotNanos >= IdleSnapshotInterval.toNanos
    if (idle && !periodic && !signal.awaitAfter(signalsSeen, IdleTriggerWait.toNanos)) return unchanged(start)
    signalsSeen = signal.count

    // Each shard reports all it has ready (up to its own cap): the trigger's limits are shared out after.
    val limits = FetchPlanner.limitsOf(limit)
    val perShard = config.maxRecordsPerShardPerTrigger.getOrElse(Long.MaxValue)
    val shards = discovery.shards()
    val keyGroups = planner.keyGroups(readable, owners)
    val lastBatch = lastPlan.map(p => (p.start, p.end, p.moved))
    val groups = standing.of(keyGroups, shards, start, perShard, lastBatch).zip(keyGroups.map(_._2))
    val sc = SparkSession.active.sparkContext
    context = Some(sc)
    // A catch-up (the last snapshot saw shards behind their tip) gathers for up to CatchUpBatch since that snapshot.
    val fill = if (!lastBehind) 0L else math.max(0L, CatchUpBatch.toNanos - (System.nanoTime() - lastSnapshotNanos))
    val feedConfig = readConfig
    // Each group's shards that are not quiet (at their tip with nothing past the start), and where it ran: the
    // quiet ones, most of a large stream's, need nothing done here.
    def snapshot(linger: Long) = SnapshotJob.answers(
      sc,
      SnapshotSpec(
        sourceId,
        feedConfig,
        runEnd,
        SnapshotWait(linger, untilCaughtUp = false, fill),
        driverListens = listening),
      groups,
      if (periodic) "periodic, idle stream" else "",
      Some(sentGroups)
    )
    val linger = if (lastAdvanced || executorsSignal) 0L else IdleWait.toNanos
    var answers = snapshot(linger)
    // AvailableNow ends at the first batch with nothing new: "nothing" must mean every shard reached the tip it
    // ends at, never that reads were slow or throttled.
    while (availableNow && !answers.exists(_.snapshots.exists(_.advanced)) &&
      !answers.forall(_.snapshots.forall(_.state.caughtUp))) answers = snapshot(IdleWait.toNanos)
    val snapshots = answers.flatMap(_.snapshots)
    val stats = answers.map(_.stats)
    held = Some(FetchPlanner.nextOffset(start, heldPositions(snapshots), shards))
    noteOwners(keyGroups, answers)
    val now = System.currentTimeMillis()
    val hold = holdsBack(snapshots, limits, now)
    val planned = if (hold) snapshots.map(_.nothingTaken) else shareOut(sc, snapshots, limits)
    // Reads past a named end (endingPosition per shard) are held, never planned: the offset stops at the end.
    val advanced = planned.filter(_.advanced).map(s => s.key -> shardEnds.fold(s.last)(_.clip(s.key, s.last)))
      .filter { case (key, to) => !start.get(key).contains(to) }
    lastAdvanced = advanced.nonEmpty
    if (lastAdvanced) batchClock = Some(now)
    lastBehind = snapshots.exists(_.state.millisBehindLatest.exists(_ > CatchUpBehindMillis))
    lastSnapshotNanos = System.nanoTime()
    lastReadable = readable
    executorsSignal = listening && stats.nonEmpty && stats.forall(_.signalsDriver)
    progress.record(planned, stats, quiet = readable.size - snapshots.size)
    if (planned.exists(_.last == ShardEnd)) discovery.invalidate()
    if (!lastAdvanced) unchanged(start)
    else {
      val end = planner.endOffset(start, advanced)
      lastPlan = Some(LastPlan(start, end, keyGroups.map(_._1), advanced.iterator.map(_._1).toSet))
      known.remember(end)
    }
  }

  /**
   * A group's shards are held where its task ran. Only the moves change `owners` (an unchanged map keeps the task
   * groups worked out, [[FetchPlanner.keyGroups]]), and a group answered where it was the trigger before, with the
   * same shards, moved none: its shards are not looked at one by one.
   */
  private def noteOwners(keyGroups: Seq[(Seq[ShardKey], Option[String])], answers: Seq[SnapshotAnswer]): Unit = {
    val at = keyGroups.iterator.zip(answers.iterator).map { case ((keys, _), a) => keys -> a.stats.location }.toVector
    val moved = at.iterator.zipWithIndex.flatMap { case ((keys, location), g) =>
      if (answeredAt.lift(g).exists { case (k, l) => (k eq keys) && l == location }) Iterator.empty
      else keys.iterator.filter(k => !owners.get(k).contains(location)).map(_ -> location)
    }.toVector
    if (moved.nonEmpty) owners ++= moved
    answeredAt = at
  }

  /** Where each shard's feed has read to, for the shards it moved past the batch's start. */
  private def heldPositions(snapshots: Seq[ShardSnapshot]): Seq[(ShardKey, ShardPosition)] =
    snapshots.flatMap { s =>
      val to = s.heldTo.getOrElse(s.last)
      if (to == s.from) None else Some(s.key -> to)
    }

  /**
   * `minRecordsPerTrigger` (Spark's `ReadMinRows`): fewer records ready than that, and less than `maxTriggerDelay`
   * since the last batch, hold the batch back. Never the first snapshot of a run (the clock starts there, as in
   * Kafka's source: a restarted query does not wait out a delay its last run began), nor `Trigger.AvailableNow`,
   * whose run ends at the first trigger with nothing new, nor a batch that reads a shard to its end: its children
   * are read only after it, so holding it would starve them however many records they have.
   */
  private def holdsBack(snapshots: Seq[ShardSnapshot], limits: TriggerLimits, now: Long): Boolean = {
    val ends = snapshots.exists(s => s.advanced && s.last == ShardEnd)
    val hold = !availableNow && !ends && limits.minRecords.exists { min =>
      batchClock.exists(t => now - t < min.maxTriggerDelayMs && snapshots.map(_.state.records).sum < min.minRows)
    }
    if (batchClock.isEmpty) batchClock = Some(now)
    holdEnds = if (hold) limits.minRecords.flatMap(m => batchClock.map(_ + m.maxTriggerDelayMs)) else None
    hold
  }

  /**
   * The batch's part of each shard: all that is ready, or under `maxRecordsPerTrigger` / `maxBytesPerTrigger` a
   * share in proportion to what each shard has ready ([[BatchShares]]), cut at a record where the feed is
   * ([[ShareJob]]): one more short job, for capped batches only.
   */
  private def shareOut(sc: SparkContext, snapshots: Seq[ShardSnapshot], limits: TriggerLimits): Seq[ShardSnapshot] =
    if (limits.maxRecords.isEmpty && limits.maxBytes.isEmpty) snapshots
    else {
      val ready = snapshots.map(s => BatchShares.Ready(s.state.records, s.state.bytes)).toIndexedSeq
      val shares = BatchShares.of(ready, limits.maxRecords, limits.maxBytes)
      val toCut = snapshots.indices.filterNot(i => shares(i).takesAll(ready(i)))
      if (toCut.isEmpty) snapshots
      else {
        val groups = toCut.groupBy(i => snapshots(i).location).toSeq.sortBy(_._1).map { case (location, is) =>
          is.map(i =>
            SnapshotRequest(snapshots(i).key, snapshots(i).from, shares(i).records, shares(i).bytes)) -> location
        }
        val cuts = ShareJob.run(sc, sourceId, groups)
        val cutKeys = toCut.map(snapshots(_).key).toSet
        snapshots.map { s =>
          if (!cutKeys(s.key)) s
          else cuts.get(s.key).fold(s.nothingTaken)(s.cut)
        }
      }
    }

  /** Spark hands back the offsets `latestOffset` returned, or ones read back from its log (restarts). */
  private def sameOffset(a: KinesisSourceOffset, b: KinesisSourceOffset): Boolean = (a eq b) || a == b

  override def planInputPartitions(startOffset: Offset, endOffset: Offset): Array[InputPartition] = {
    val start = KinesisSourceOffset.from(startOffset)
    val end = KinesisSourceOffset.from(endOffset)
    val shards = discovery.shards()
    def range(key: ShardKey, to: ShardPosition): Option[ShardRange] =
      ShardRange.planned(key, start.get(key).getOrElse(TrimHorizon), to, shards.get(key).map(_.hashKeys))
        .map(r => if (shardEnds.exists(_.endsAt(key, to))) r.copy(toIsRecord = false) else r)
    val grouped = lastPlan.filter(p => sameOffset(p.end, end)) match {
      // The snapshot's groups hold every shard the batch moved (in the order its tasks read them); from the start
      // it planned from, only those have a range (the others are looked at no further: most, at 10,000 shards).
      case Some(plan) if sameOffset(plan.start, start) =>
        plan.groups.map(_.iterator.filter(plan.moved).flatMap(k => end.get(k).flatMap(range(k, _))).toVector)
          .filter(_.nonEmpty)
      case Some(plan) => plan.groups.map(_.flatMap(k => end.get(k).flatMap(range(k, _)))).filter(_.nonEmpty)
      case None => // a batch planned before a restart: nothing is buffered yet
        val ranges = end.positions.toSeq.sortBy(_._1).flatMap { case (key, to) => range(key, to) }
        planner.taskGroups(ranges)(_.key)
    }
    grouped.map { group =>
      KinesisInputPartition(sourceId, readConfig, group, FetchPlanner.ownerOf(group.map(_.key), owners)): InputPartition
    }.toArray
  }

  def prepareForRealTimeMode(): Unit = synchronized {
    // Admission control has nothing to limit in a batch that reads for as long as it lasts.
    Seq(
      MaxRecordsPerTrigger -> config.maxRecordsPerTrigger,
      MaxRecordsPerShardPerTrigger -> config.maxRecordsPerShardPerTrigger,
      MaxBytesPerTrigger -> config.maxBytesPerTrigger,
      MinRecordsPerTrigger -> config.minRecordsPerTrigger,
      MaxTriggerDelay -> config.maxTriggerDelay.map(d => s"${d.toMillis}ms")
    )
      .collectFirst { case (option, Some(v)) =>
        throw new KinesisOptionException(s"Option '${option.key}' ($v) does not apply in real-time mode, where a " +
          s"batch reads for as long as its trigger's duration: remove '${option.key}', or use a processing-time trigger.")
      }
    realTime = true
    resolved = None
    logInfo(
      s"Real-time mode: tasks read their shards for the whole batch; idle shards are polled every ${config.copy(realTime = true).idlePollCap}")
  }

  /** A real-time batch: every shard readable from `startOffset`, grouped into tasks as the snapshots would be. */
  def planInputPartitions(startOffset: Offset): Array[InputPartition] = {
    val start = KinesisSourceOffset.from(startOffset)
    planner.checkStreams(start)
    synchronized { realTimeStart = Some(start) }
    SparkSession.getActiveSession.foreach(s => context = Some(s.sparkContext))
    val feedConfig = readConfig
    val shards = discovery.shards()
    planner.taskGroups(planner.readableShards(start))(identity).map { group =>
      RealTimeInputPartition(
        sourceId,
        feedConfig,
        group.map(k => k -> start.get(k).getOrElse(TrimHorizon)),
        FetchPlanner.ownerOf(group, owners),
        group.flatMap(k => shards.get(k).map(k -> _.hashKeys)).toMap
      ): InputPartition
    }.toArray
  }

  /** The end of a real-time batch: its start moved on by what each task read, as a snapshot would have. */
  def mergeOffsets(offsets: Array[PartitionOffset]): Offset = synchronized {
    val shards = offsets.toSeq.flatMap {
      case p: RealTimePartitionOffset => p.shards
      case other => throw new IllegalArgumentException(s"not a Kinesis partition offset: $other")
    }
    owners ++= shards.map(s => s.key -> s.location)
    progress.record(shards, Nil)
    if (shards.exists(_.last == ShardEnd)) discovery.invalidate()
    known.remember(
      planner.endOffset(
        realTimeStart.getOrElse(KinesisSourceOffset(Map.empty)),
        shards.filter(_.advanced).map(s => s.key -> s.last)))
  }

  override def createReaderFactory(): PartitionReaderFactory = KinesisPartitionReaderFactory

  override def deserializeOffset(json: String): Offset = known.parse(json)

  override def commit(end: Offset): Unit = ()

  /** The query's buffers are freed now in this JVM, and on the executors that read its shards by a short job. */
  override def stop(): Unit = {
    signal.stop()
    Prefetcher.release(sourceId)
    val here = SnapshotJob.executorLocation()
    context.foreach(sc => SnapshotJob.release(sc, sourceId, owners.values.toSeq.distinct.filter(_ != here).sorted))
    consumers.foreach(_.stop())
  }

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] =
    progress.metrics(discovery.shards()).asJava

  override def toString: String = s"KinesisMicroBatchStream[${config.streams.mkString(",")}]"
}

/** The last batch `latestOffset` planned: from where, to where, its task groups, the shards it moved. */
private final case class LastPlan(
    start: KinesisSourceOffset,
    end: KinesisSourceOffset,
    groups: Seq[Seq[ShardKey]],
    moved: Set[ShardKey])

object KinesisMicroBatchStream {
  /**
   * The query's id, which its checkpoint keeps across restarts (a restarted query finds its consumer again):
   * Spark sets it on the query's thread before the sources are made. Else a digest of the checkpoint location.
   */
  def derivedConsumerName(checkpointLocation: String): String =
    Option(SparkSession.active.sparkContext.getLocalProperty(QueryIdProperty)).getOrElse {
      val digest = java.security.MessageDigest.getInstance("SHA-256").digest(checkpointLocation.getBytes("UTF-8"))
      digest.take(16).map(b => f"${b & 0xff}%02x").mkString
    }

  private val QueryIdProperty = "sql.streaming.queryId"
  /** While nothing arrives and executors cannot signal the driver, how long a snapshot waits on them for records. */
  val IdleWait: java.time.Duration = java.time.Duration.ofSeconds(1)
  /** While nothing arrives, how long a trigger waits for an executor's signal before it reports nothing new. */
  val IdleTriggerWait: java.time.Duration = java.time.Duration.ofMillis(250)
  /** While nothing arrives, a snapshot job runs at least this often anyway: feeds stay wanted, metrics fresh. */
  val IdleSnapshotInterval: java.time.Duration = java.time.Duration.ofSeconds(10)
  /** While shards are behind their tip by more than CatchUpBehindMillis, batches are planned about this often. */
  val CatchUpBatch: java.time.Duration = java.time.Duration.ofSeconds(1)
  val CatchUpBehindMillis = 1000L
  /** Offsets [[KnownOffsets]] keeps: the batch being planned, the one before it, and the committed one. */
  val KnownOffsetsKept = 4
}
