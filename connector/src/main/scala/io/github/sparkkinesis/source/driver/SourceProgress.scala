package io.github.sparkkinesis.source
package driver

import scala.collection.mutable

import io.github.sparkkinesis.client.CallCounts

/**
 * The source's metrics in `StreamingQueryProgress.sources[].metrics`, from the last snapshot: Databricks' names
 * where Databricks has one, ours beside them. Counts of calls, throttling and re-reads are what happened since
 * the snapshot that planned the previous batch, on every executor that ran a snapshot task: an idle stream's
 * snapshots (which no progress report may follow) add up until a batch reports them.
 *
 * @param mode how the query reads, `polling` or `efo` (Databricks' `mode`, in `consumerMode`'s words)
 * @param numStreams the streams the query reads (Databricks' `numStreams`)
 */
final class SourceProgress(mode: String, numStreams: Int) {
  private val callsSeen = mutable.Map.empty[String, CallCounts]
  private val reReadsSeen = mutable.Map.empty[String, Long]
  private val aggregatesSeen = mutable.Map.empty[String, AggregateCounts]
  private val fanOutSeen = mutable.Map.empty[String, FanOutCounts]
  private var snapshots: Seq[ShardSnapshot] = Nil
  /** Shards of the last snapshot left out as quiet: at their tip, nothing new, 0 ms behind. */
  private var quiet = 0
  private var calls = CallCounts(0, 0, 0, 0)
  private var reReads = 0L
  /** KPL aggregates not split (misplaced, malformed), since the query started: counts that matter when not 0. */
  private var aggregates = AggregateCounts.zero
  private var fanOut = FanOutCounts.zero
  private var consumers = 0
  private var heldBytes = 0L
  private var bufferLimit = 0L
  private var plannedBatch = true
  /** The last metrics and the listing they counted: reported again as they are until a snapshot or the listing
   * changes (Spark asks on every trigger, four a second on an idle stream). */
  private var reported: Option[(Map[ShardKey, ShardMeta], Map[String, String])] = None

  def record(latest: Seq[ShardSnapshot], stats: Seq[ExecutorStats], quiet: Int = 0): Unit = synchronized {
    reported = None
    snapshots = latest
    this.quiet = quiet
    // Each of an executor's tasks reports the same JVM-wide counters: the latest (largest) one counts.
    val perExecutor = stats.groupBy(_.location).map { case (loc, s) => loc -> s.maxBy(_.calls.calls) }
    val newCalls = perExecutor.map { case (loc, s) => s.calls - callsSeen.getOrElse(loc, CallCounts(0, 0, 0, 0)) }
      .foldLeft(CallCounts(0, 0, 0, 0))(_ + _)
    val newReReads = perExecutor.map { case (loc, s) => s.reReads - reReadsSeen.getOrElse(loc, 0L) }.sum
    aggregates = perExecutor.foldLeft(aggregates) { case (sum, (loc, s)) =>
      sum + s.aggregates.since(aggregatesSeen.getOrElse(loc, AggregateCounts.zero))
    }
    val newFanOut = perExecutor.map { case (loc, s) => s.fanOut - fanOutSeen.getOrElse(loc, FanOutCounts.zero) }
      .foldLeft(FanOutCounts.zero)(_ + _)
    calls = if (plannedBatch) newCalls else calls + newCalls
    reReads = if (plannedBatch) newReReads else reReads + newReReads
    fanOut = if (plannedBatch) newFanOut else fanOut + newFanOut
    plannedBatch = latest.exists(_.advanced)
    heldBytes = perExecutor.values.map(_.heldBytes).sum
    bufferLimit = if (perExecutor.isEmpty) 0L else perExecutor.values.map(_.bufferLimit).min
    perExecutor.foreach { case (loc, s) =>
      callsSeen(loc) = s.calls; reReadsSeen(loc) = s.reReads; fanOutSeen(loc) = s.fanOut
      aggregatesSeen(loc) = s.aggregates
    }
  }

  /** Enhanced fan-out consumers the query reads through (one per stream), once registered. */
  def registeredConsumers(n: Int): Unit = synchronized { consumers = n; reported = None }

  def metrics(shards: Map[ShardKey, ShardMeta]): Map[String, String] = synchronized {
    reported.collect { case (s, m) if s eq shards => m }.getOrElse {
      if (!(closedOf._1 eq shards)) closedOf = shards -> shards.valuesIterator.count(_.closed)
      val m = compute(shards.size, closedOf._2)
      reported = Some(shards -> m)
      m
    }
  }

  /** The listing's closed shards, counted once per listing (each batch's report asks). */
  private var closedOf: (Map[ShardKey, ShardMeta], Int) = (null, 0)

  private def compute(shards: Int, closed: Int): Map[String, String] = {
    // The quiet shards are 0 ms behind: counted, not listed.
    val behind = snapshots.flatMap(_.state.millisBehindLatest) ++ (if (quiet > 0) Seq(0L) else Nil)
    val lagged = behind.size + math.max(0, quiet - 1)
    val planned = snapshots.filter(_.advanced)
    Map(
      "numStreams" -> numStreams.toLong,
      "numProcessedRecords" -> planned.map(_.state.records).sum,
      "numProcessedBytes" -> planned.map(_.state.bytes).sum,
      "totalPrefetchedBytes" -> heldBytes,
      "fetchBufferSize" -> bufferLimit,
      "numTotalShards" -> shards.toLong,
      "numClosedShards" -> closed.toLong,
      "numRegisteredConsumers" -> consumers.toLong,
      "numAwsRateLimitErrors" -> calls.throttled,
      "kinesisCalls" -> calls.calls,
      "retries" -> calls.retries,
      "throttledCalls" -> calls.throttled,
      "serverErrors" -> calls.serverErrors,
      "reReadRanges" -> reReads,
      "numMisplacedAggregatesSkipped" -> aggregates.misplaced,
      "numMalformedAggregates" -> aggregates.malformed,
      "subscriptions" -> fanOut.subscriptions,
      "subscriptionRenewals" -> fanOut.renewals,
      "fanOutEvents" -> fanOut.events,
      "eventStreamErrors" -> fanOut.streamErrors
    ).map { case (k, v) => k -> v.toString } + ("mode" -> mode) ++
      (if (lagged == 0) Map.empty[String, String]
       else Map(
         "avgMsBehindLatest" -> (behind.sum / lagged).toString,
         "maxMsBehindLatest" -> behind.max.toString,
         "minMsBehindLatest" -> behind.min.toString))
  }
}

object SourceProgress {
  /** The `mode` metric: the `consumerMode` the query reads with. */
  def modeOf(config: SourceConfig): String = if (config.fanOut.isDefined) "efo" else "polling"
}
