package io.github.sparkkinesis.source
package driver

import java.util.UUID

import scala.collection.mutable

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}
import io.github.sparkkinesis.source.executor.KinesisPartitionReaderFactory

/**
 * `spark.read.format("kinesis")`: the records from `initialPosition` up to the tip seen when the read is planned.
 * Planning reads every shard to its tip (or the planning time) on the executors, shard lineage included, so the
 * partitions hold concrete ranges; a child shard's range follows its parents' in the same partition. Executors
 * keep what fits in `fetchBufferSize` and only pass over the rest, which the batch's tasks read again.
 */
final class KinesisBatch(config: SourceConfig) extends Batch {
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
    /** Shards whose range ends at a position the user gave, before where the read reached. */
    val cut = mutable.Set.empty[ShardKey]
    def clip(key: ShardKey, reached: ShardPosition) = {
      val end = ends.fold(reached)(_.clip(key, reached))
      if (end != reached) cut += key else cut -= key
      end
    }
    // After the listing initialOffset made: its answers' dates bound Kinesis' clock at the start.
    val runEnd = RunEnd.startedAt(startMillis, discovery.clock, config.endingPosition)
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
