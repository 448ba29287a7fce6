package io.github.sparkkinesis.source

import java.net.InetAddress
import java.util.concurrent.TimeUnit

import io.github.sparkkinesis.client.{CallCounts, KinesisClientFactory, SdkCallStats}
import org.apache.spark.{Partition, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.rdd.RDD

/** What to fetch for one shard: from where, and how much at most (admission control shares). */
final case class FetchRequest(key: ShardKey, from: ShardPosition, maxRecords: Long, maxBytes: Long)

/**
 * What a fetch read for one shard. `last` is the position after the last record buffered (== `from` when
 * nothing new), `caughtUp` that the shard is at its tip (or at the AvailableNow cut-off), `location` where the
 * records are buffered.
 */
final case class FetchResult(
    key: ShardKey,
    from: ShardPosition,
    last: ShardPosition,
    records: Long,
    bytes: Long,
    millisBehindLatest: Option[Long],
    caughtUp: Boolean,
    location: String,
    calls: CallCounts)

/**
 * The short Spark job `latestOffset` runs: each task fetches a group of shards into the executor's
 * [[ShardBuffers]] and reports how far it got, so the batch that follows is planned from records that exist.
 */
object FetchJob {
  private val JobDescription = "spark.job.description"
  val NearTipMillis = 1000L

  /** How Spark names an executor in preferred locations. */
  def executorLocation(): String = {
    val env = SparkEnv.get
    s"executor_${InetAddress.getLocalHost.getHostAddress}_${env.executorId}"
  }

  def run(
      sc: SparkContext,
      sourceId: String,
      config: SourceConfig,
      groups: Seq[(Seq[FetchRequest], Option[String])],
      cutoffMillis: Option[Long],
      keepRecords: Boolean = false): Seq[FetchResult] = {
    if (groups.isEmpty) return Nil
    val rdd = new FetchRDD(sc, sourceId, config, groups, cutoffMillis, keepRecords)
    // Named in the UI; the query's own description (batch id) is put back for the batch that follows.
    val previous = sc.getLocalProperty(JobDescription)
    sc.setJobDescription(s"Kinesis fetch (${groups.map(_._1.size).sum} shards)")
    try sc.runJob(rdd, (it: Iterator[FetchResult]) => it.toVector).flatten.toSeq
    finally sc.setLocalProperty(JobDescription, previous)
  }

  /** Fetches the requests round-robin until each shard is caught up, out of budget, or the deadline passes. */
  def fetch(sourceId: String, config: SourceConfig, requests: Seq[FetchRequest], cutoffMillis: Option[Long],
      keepRecords: Boolean): Seq[FetchResult] = {
    val client = KinesisClientFactory.sync(config.connection)
    val location = executorLocation()
    val before = SdkCallStats.snapshot()
    val deadline = System.nanoTime() + config.maxFetchDuration.toNanos

    final class State(val request: FetchRequest, val buffer: ShardBuffers.Buffer) {
      var records = 0L
      var bytes = 0L
      var millisBehind: Option[Long] = None
      var done = false
      var caughtUp = false
    }
    val states = requests.map { r =>
      val buffer = ShardBuffers.forFetch(sourceId, r.key, r.from, keepRecords, new ShardReader(client, config, r.key, r.from))
      new State(r, buffer)
    }
    states.foreach(s => if (s.buffer.reader.isEnded) { s.done = true; s.caughtUp = true })

    while (states.exists(!_.done) && System.nanoTime() < deadline) {
      val ready = states.filter(s => !s.done && s.buffer.reader.waitNanos == 0)
      if (ready.isEmpty) {
        val wait = states.filter(!_.done).map(_.buffer.reader.waitNanos).min
        TimeUnit.NANOSECONDS.sleep(math.min(wait, math.max(0L, deadline - System.nanoTime())))
      }
      for (s <- ready) s.buffer.synchronized {
        val budget = math.min(config.maxRecordsPerFetch.toLong, s.request.maxRecords - s.records).toInt
        val poll = s.buffer.reader.poll(budget)
        s.millisBehind = Some(poll.millisBehindLatest)
        // Admit records while they are within the AvailableNow cut-off and the shard's budget (an aggregate can
        // hold more user records than the budget left).
        var admittedBytes = 0L
        val admitted = poll.records.iterator
          .takeWhile(r => cutoffMillis.forall(r.arrivalMillis <= _))
          .zipWithIndex
          .takeWhile { case (r, i) =>
            val fits = s.records + i < s.request.maxRecords && (i == 0 || s.bytes + admittedBytes < s.request.maxBytes)
            if (fits) admittedBytes += r.data.length + r.partitionKey.length
            fits
          }
          .map(_._1).toVector
        s.buffer.records ++= admitted
        s.records += admitted.size
        s.bytes += admittedBytes
        val cutoffHit = cutoffMillis.exists(c => admitted.size < poll.records.size && poll.records(admitted.size).arrivalMillis > c)
        if (admitted.size < poll.records.size) {
          // Records past the cut-off or the budget were read but must not be planned: forget them and the
          // reader's position past them, so the next fetch resumes after the last admitted record.
          s.buffer.reader.rewindTo(s.buffer.records.lastOption.map(_.position).getOrElse(s.buffer.from))
        }
        val atTip = poll.ended || poll.millisBehindLatest == 0
        if (cutoffHit || (admitted.size == poll.records.size && atTip)) {
          s.done = true
          s.caughtUp = true
        }
        // Streaming: a shard within a second of its tip has given this batch what it has; waiting for more would
        // only delay the batch (with AvailableNow and batch reads, "done" must mean the tip or the cut-off).
        if (cutoffMillis.isEmpty && poll.records.nonEmpty && poll.millisBehindLatest <= FetchJob.NearTipMillis) s.done = true
        if (s.records >= s.request.maxRecords || s.bytes >= s.request.maxBytes) s.done = true
      }
    }
    // The JVM's call counts over this task, reported with the task's first shard (other tasks running on the
    // same executor at the same time blur them; they are for metrics only).
    val calls = SdkCallStats.snapshot() - before
    states.zipWithIndex.map { case (s, i) =>
      s.buffer.synchronized {
        FetchResult(s.request.key, s.request.from, s.buffer.last, s.records, s.bytes, s.millisBehind, s.caughtUp,
          location, if (i == 0) calls else CallCounts(0, 0, 0, 0))
      }
    }
  }
}

private final class FetchPartition(val index: Int, val requests: Seq[FetchRequest], val location: Option[String])
  extends Partition

private final class FetchRDD(
    sc: SparkContext,
    sourceId: String,
    config: SourceConfig,
    groups: Seq[(Seq[FetchRequest], Option[String])],
    cutoffMillis: Option[Long],
    keepRecords: Boolean) extends RDD[FetchResult](sc, Nil) {

  override protected def getPartitions: Array[Partition] =
    groups.zipWithIndex.map { case ((requests, location), i) => new FetchPartition(i, requests, location): Partition }.toArray

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[FetchPartition].location.toSeq

  override def compute(split: Partition, context: TaskContext): Iterator[FetchResult] =
    FetchJob.fetch(sourceId, config, split.asInstanceOf[FetchPartition].requests, cutoffMillis, keepRecords).iterator
}
