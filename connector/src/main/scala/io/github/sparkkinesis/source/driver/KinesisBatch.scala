package io.github.sparkkinesis.source
package driver

import java.util.UUID

import scala.collection.mutable

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}
import io.github.sparkkinesis.source.executor.KinesisPartitionReaderFactory

/**
 * `spark.read.format("kinesis")`: the records from `initialPosition` up to the tip seen when the read is planned, or
 * `endingPosition`. Planned without reading the data (docs/design/offsets.md, "One read per record"): each shard's
 * end is probed on the driver ([[ShardEndProbe]]), lineage included, and the tasks read every record once, their
 * shards all at once. Without a bound on Kinesis' clock (no `Date` header) the end cannot be put on its clock:
 * planning then reads every shard to its tip on the executors ([[SnapshotJob]]), keeping what fits in
 * `fetchBufferSize`, and the tasks read the rest again.
 */
final class KinesisBatch(config: SourceConfig) extends Batch with org.apache.spark.internal.Logging {
  private lazy val partitions: Array[InputPartition] = plan()

  override def planInputPartitions(): Array[InputPartition] = partitions

  override def createReaderFactory(): PartitionReaderFactory = KinesisPartitionReaderFactory

  private def plan(): Array[InputPartition] = {
    val sourceId = UUID.randomUUID().toString
    val discovery = new ShardDiscovery(config)
    val planner = new FetchPlanner(config, discovery)
    val startMillis = System.currentTimeMillis()
    val start = planner.initialOffset(startMillis)
    val ends = config.endingPosition.collect { case e: EndPosition.PerShard => e }
    ends.foreach(planner.checkEnds(_, start))
    // After the listing initialOffset made: its answers' dates bound Kinesis' clock at the start.
    val runEnd = RunEnd.startedAt(startMillis, discovery.clock, config.endingPosition)
    val snapshots = SparkSession.active.conf.getOption(KinesisBatch.PlanningConf).contains("snapshots")
    val arrivedBy = runEnd.arrivedAfterMillis.filter(_ => !snapshots)
    val basis = Planning(sourceId, discovery, planner, start, ends)
    val waitStart = System.nanoTime()
    arrivedBy.filter(awaitKinesisPast(discovery, _)) match {
      case Some(end) =>
        val waited = (System.nanoTime() - waitStart) / 1000000
        val planned = planByProbes(basis, end)
        logInfo(s"Planned a batch read of ${config.streams.mkString(", ")} up to records that arrived by " +
          s"${java.time.Instant.ofEpochMilli(end)} (Kinesis' clock) in ${System.currentTimeMillis() - startMillis} " +
          s"ms: $waited ms waiting for Kinesis' clock to pass it, then each shard's end probed")
        planned
      case None =>
        logInfo(s"Planning a batch read of ${config.streams.mkString(", ")} by reading each shard to its tip" +
          (if (snapshots) s" (${KinesisBatch.PlanningConf}=snapshots)" else ": no Date header bounds Kinesis' clock"))
        planBySnapshots(basis, runEnd)
    }
  }

  /**
   * Waits until Kinesis' clock surely passed `arrivedBy` (and its hosts' margin): a record put from then on arrives
   * after it, so a probe that finds none after it finds the tip for good. False without a bound on the clock.
   */
  private def awaitKinesisPast(discovery: ShardDiscovery, arrivedBy: Long): Boolean = {
    val now = System.currentTimeMillis()
    discovery.clock.kinesisMillisAtLeast(now).exists { kinesisNow =>
      val wait = arrivedBy + RunEnd.MarginMillis + 1 - kinesisNow
      if (wait > 0) Thread.sleep(wait)
      true
    }
  }

  /**
   * Each readable shard's end probed at `arrivedBy`; a shard found ended (all its records arrived by then) makes
   * its children readable, probed in turn. No record is read: the tasks read each once.
   */
  private def planByProbes(basis: Planning, arrivedBy: Long): Array[InputPartition] = {
    import basis._
    val probed = mutable.LinkedHashMap.empty[ShardKey, ProbedEnd]
    var offset = start
    var more = true
    while (more) {
      val found = ShardEndProbe.probe(config, planner.readableShards(offset).filterNot(probed.contains), arrivedBy)
      probed ++= found.toSeq.sortBy(_._1)
      // A shard that closed after the listing: its children may hold records that arrived by the end.
      if (found.values.exists(_ == ProbedEnd.Ended)) discovery.invalidate()
      val finished = found.collect { case (k, ProbedEnd.Ended) if endsWithShard(ends, k) => k -> ShardEnd }
      offset = KinesisSourceOffset(offset.positions ++ finished)
      more = found.nonEmpty
    }
    val shards = discovery.shards()
    val ranges = probed.toSeq.sortBy(_._1).flatMap { case (key, end) =>
      KinesisBatch.probedRange(
        key,
        start.get(key).getOrElse(TrimHorizon),
        end,
        arrivedBy,
        ends.flatMap(_.positions.get(key)),
        shards.get(key).map(_.hashKeys))
    }
    lineageGroups(ranges, shards).map { group =>
      val index = group.map(_.key).zipWithIndex.toMap
      val parents =
        group.map(r => shards.get(r.key).toSeq.flatMap(_.parents).flatMap(p => index.get(ShardKey(r.key.stream, p))))
      KinesisInputPartition(sourceId, config, group, None, oneRead = true, parents = parents): InputPartition
    }.toArray
  }

  /** A shard read to its end, unless `endingPosition` ends it sooner (its children then stay unread). */
  private def endsWithShard(ends: Option[EndPosition.PerShard], key: ShardKey): Boolean =
    ends.flatMap(_.positions.get(key)).forall(p => p == ShardEnd || p.isInstanceOf[AtTimestamp])

  /** Reads every shard to its tip (or cut-off) on the executors: the path without a bound on Kinesis' clock. */
  private def planBySnapshots(basis: Planning, runEnd: RunEnd): Array[InputPartition] = {
    import basis._
    /** Shards whose range ends at a position the user gave, before where the read reached. */
    val cut = mutable.Set.empty[ShardKey]
    def clip(key: ShardKey, reached: ShardPosition) = {
      val end = ends.fold(reached)(_.clip(key, reached))
      if (end != reached) cut += key else cut -= key
      end
    }
    val sc = SparkSession.active.sparkContext
    var offset = start
    val owners = mutable.Map.empty[ShardKey, String]
    var done = false
    while (!done) {
      val readable = planner.readableShards(offset)
      // Every round asks from the read's start: a feed that reached further reports how far, and keeps its records.
      val shards = discovery.shards()
      val requests = readable.map(k =>
        SnapshotRequest.of(shards, k, start.get(k).getOrElse(TrimHorizon), Long.MaxValue, Long.MaxValue))
      val spec = SnapshotSpec(sourceId, config, Some(runEnd), SnapshotWait(0L, untilCaughtUp = true), spill = true)
      val (snapshots, _) = SnapshotJob.run(sc, spec, planner.groups(requests, owners.toMap))
      snapshots.foreach(s => owners(s.key) = s.location)
      if (snapshots.exists(_.last == ShardEnd)) discovery.invalidate()
      // A shard that ends before its end leaves its children unread: they come after it.
      offset = KinesisSourceOffset(offset.positions ++ snapshots.map(s => s.key -> clip(s.key, s.last)))
      // Done when every shard is at its tip or the cut-off and no parent's end made children readable.
      done = snapshots.forall(_.state.caughtUp) && planner.readableShards(offset).toSet == readable.toSet
    }
    val shards = discovery.shards()
    val ranges = offset.positions.toSeq.sortBy(_._1).flatMap { case (key, to) =>
      val from = start.get(key).getOrElse(TrimHorizon)
      ShardRange.planned(key, from, to, shards.get(key).map(_.hashKeys)).map(_.copy(toIsRecord = !cut(key)))
    }
    lineageGroups(ranges, discovery.shards()).map { group =>
      KinesisInputPartition(sourceId, config, group, owners.get(group.head.key)): InputPartition
    }.toArray
  }

  /** Partitions of `shardsPerTask` root shards (see [[SourceConfig.shardsPerTaskFor]]), each followed by its
   * descendants (parents before children). */
  private def lineageGroups(ranges: Seq[ShardRange], shards: Map[ShardKey, ShardMeta]): Seq[Seq[ShardRange]] = {
    val byKey = ranges.map(r => r.key -> r).toMap
    def parentsIn(r: ShardRange) =
      shards.get(r.key).toSeq.flatMap(_.parents).map(ShardKey(r.key.stream, _)).filter(byKey.contains)
    val roots = ranges.count(r => parentsIn(r).isEmpty)
    val perTask = config.shardsPerTaskFor(roots, FetchPlanner.parallelism)
    val groupOf = mutable.Map.empty[ShardKey, Int]
    val groups = mutable.ArrayBuffer.empty[mutable.ArrayBuffer[ShardRange]]
    var pending = ranges
    while (pending.nonEmpty) {
      val (ready, waiting) = pending.partition(r => parentsIn(r).forall(groupOf.contains))
      val next = if (ready.nonEmpty) ready else pending.take(1) // lineage cycles cannot happen; never loop forever
      for (r <- next) {
        parentsIn(r).headOption.flatMap(groupOf.get) match {
          case Some(g) => groups(g) += r; groupOf(r.key) = g
          case None =>
            if (groups.isEmpty || groups.last.count(x => parentsIn(x).isEmpty) >= perTask)
              groups += mutable.ArrayBuffer.empty
            groups.last += r
            groupOf(r.key) = groups.size - 1
        }
      }
      pending = if (ready.nonEmpty) waiting else pending.drop(1)
    }
    groups.map(_.toSeq).toSeq
  }
}

/** What both ways of planning start from: the read's id, its listing and planner, its start and per-shard ends. */
private final case class Planning(
    sourceId: String,
    discovery: ShardDiscovery,
    planner: FetchPlanner,
    start: KinesisSourceOffset,
    ends: Option[EndPosition.PerShard])

object KinesisBatch {
  /**
   * Internal, for the bench's side-by-side row: `snapshots` plans a batch read as before one-read planning (every
   * shard read to its tip on the executors). Not an option: nothing else should want it.
   */
  val PlanningConf = "spark.sparkkinesis.internal.batchPlanning"

  /**
   * A shard's range from `from` to its `end` probed at `arrivedBy`, or to `ending` (its `endingPosition`) when that
   * comes first; None when nothing lies between (a start at or past the end).
   */
  def probedRange(
      key: ShardKey,
      from: ShardPosition,
      end: ProbedEnd,
      arrivedBy: Long,
      ending: Option[ShardPosition],
      hashKeys: Option[HashKeySpan]): Option[ShardRange] = {
    val whole = ShardRange(key, from, ShardEnd, hashKeys, toIsRecord = false)
    val probed = end match {
      case ProbedEnd.Before(seq) => whole.copy(before = Some(seq))
      case ProbedEnd.ArrivedBy(ms) => whole.copy(arrivedBy = Some(ms))
      case ProbedEnd.Ended => whole
    }
    val range = ending match {
      case Some(TrimHorizon) => None
      case Some(stop: After) =>
        probed.before match {
          // The probed record comes no later than the given end: it ends the range.
          case Some(seq) if !executor.SequenceNumbers.isAfter(stop, seq, 0L) => Some(probed)
          case _ => Some(probed.copy(to = stop, before = None))
        }
      case _ => Some(probed)
    }
    range.filterNot(empty(_, arrivedBy))
  }

  /** Nothing lies between the range's start and its end. */
  private def empty(r: ShardRange, arrivedBy: Long): Boolean = (r.from, r.before, r.to) match {
    case (ShardEnd, _, _) => true
    case (After(seq, sub), Some(before), _) => !executor.SequenceNumbers.isAfter(After(seq, sub), before, 0L)
    case (After(seq, sub), None, stop: After) =>
      !executor.SequenceNumbers.isAfter(After(seq, sub), stop.sequenceNumber, stop.subSequenceNumber)
    // Records from a start time later than the end time all arrived after it.
    case (AtTimestamp(ms), _, _) => ms > arrivedBy
    case _ => false
  }
}
