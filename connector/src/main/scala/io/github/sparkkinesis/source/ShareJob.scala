package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.executor.{FeedState, Prefetcher}
import org.apache.spark.{Partition, SparkContext, TaskContext}
import org.apache.spark.rdd.RDD

/**
 * The second, short job of a capped micro-batch. The snapshot reports what each shard has ready; the driver
 * shares the limit among the shards in proportion ([[driver.BatchShares]]); then each shard's feed cuts its
 * share at a record, on the executor that holds it: the driver knows counts, not the sequence numbers of the
 * records in between. Nothing is read or waited for. A feed no longer found where the snapshot saw it (the task
 * ran elsewhere, or the feed was dropped since) gives no cut: its shard waits for the next batch.
 */
object ShareJob {
  private val JobDescription = "spark.job.description"

  /** `groups`: the shares to cut (`maxRecords` / `maxBytes` of each request), each group where its feeds are. */
  def run(sc: SparkContext, sourceId: String, groups: Seq[(Seq[SnapshotRequest], String)]): Map[ShardKey, FeedState] =
    if (groups.isEmpty) Map.empty
    else {
      val rdd = new ShareRDD(sc, sourceId, groups)
      val previous = sc.getLocalProperty(JobDescription)
      sc.setJobDescription(s"Kinesis batch shares (${groups.map(_._1.size).sum} shards)")
      try sc.runJob(rdd, CollectCuts, rdd.partitions.indices).flatten.toMap
      finally sc.setLocalProperty(JobDescription, previous)
    }

  /**
   * Runs in a task: each feed's state within its share. What a byte budget leaves unused (less than a record) is
   * passed on to the next shard of the group, so the group's bytes stay within the sum of its budgets.
   */
  def cut(sourceId: String, requests: Seq[SnapshotRequest]): Vector[(ShardKey, FeedState)] = {
    var unused = 0L
    requests.toVector.flatMap { r =>
      val budget = if (r.maxBytes > Long.MaxValue - unused) Long.MaxValue else r.maxBytes + unused
      val state = Prefetcher.get(sourceId, r.key).flatMap(_.stateFrom(r.from, r.maxRecords, budget))
      unused = state.fold(budget)(s => math.max(0L, budget - s.bytes))
      state.map(r.key -> _)
    }
  }
}

/** A named class, not a lambda: see [[CollectSnapshots]]. */
private object CollectCuts
  extends ((TaskContext, Iterator[Vector[(ShardKey, FeedState)]]) => Vector[(ShardKey, FeedState)])
  with Serializable {
  override def apply(context: TaskContext, it: Iterator[Vector[(ShardKey, FeedState)]]): Vector[(ShardKey, FeedState)] =
    it.flatten.toVector
}

private final class SharePartition(val index: Int, val requests: Seq[SnapshotRequest], val location: String)
  extends Partition

private final class ShareRDD(
    sc: SparkContext,
    sourceId: String,
    @transient private val groups: Seq[(Seq[SnapshotRequest], String)])
  extends RDD[Vector[(ShardKey, FeedState)]](sc, Nil) {

  override protected def getPartitions: Array[Partition] =
    groups.zipWithIndex.map { case ((requests, location), i) =>
      new SharePartition(i, requests.toVector, location): Partition
    }.toArray

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    Seq(split.asInstanceOf[SharePartition].location)

  override def compute(split: Partition, context: TaskContext): Iterator[Vector[(ShardKey, FeedState)]] =
    Iterator.single(ShareJob.cut(sourceId, split.asInstanceOf[SharePartition].requests))
}
