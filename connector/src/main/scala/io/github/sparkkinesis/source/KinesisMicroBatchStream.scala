package io.github.sparkkinesis.source

import java.util.{Optional, UUID}

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._

/**
 * The streaming source. `latestOffset` fetches, then plans (docs/design/offsets.md): the end of every batch is a
 * position that a fetch task has read and buffered, so the offset log says exactly what the batch holds.
 */
final class KinesisMicroBatchStream(config: SourceConfig, checkpointLocation: String)
  extends MicroBatchStream with SupportsTriggerAvailableNow with ReportsSourceMetrics with Logging {

  import KinesisMicroBatchStream._

  private val sourceId = UUID.randomUUID().toString
  private val discovery = new ShardDiscovery(config)
  private val planner = new FetchPlanner(config, discovery)
  private var availableNowCutoff: Option[Long] = None
  private var lastFetchNanos = 0L
  private var lastFetchAdvanced = true
  private var lastResults: Seq[FetchResult] = Nil

  @volatile private var initial: Option[KinesisSourceOffset] = None

  override def initialOffset(): Offset = {
    val offset = new InitialOffsetStore(checkpointLocation).getOrCreate(planner.initialOffset(System.currentTimeMillis()))
    initial = Some(offset)
    offset
  }

  /**
   * "Nothing new". Before the first batch Spark runs a batch whenever the source returns any offset (nothing is
   * committed to compare it with), so there the answer is null: an idle stream gets no empty first batch.
   */
  private def unchanged(start: KinesisSourceOffset): Offset = if (initial.contains(start)) null else start

  override def latestOffset(): Offset =
    throw new UnsupportedOperationException("the Kinesis source is read with latestOffset(start, limit)")

  override def getDefaultReadLimit: ReadLimit = {
    val limits = config.maxRecordsPerTrigger.map(ReadLimit.maxRows).toSeq ++ config.maxBytesPerTrigger.map(ReadLimit.maxBytes)
    limits match {
      case Seq() => ReadLimit.allAvailable()
      case Seq(one) => one
      case many => ReadLimit.compositeLimit(many.toArray)
    }
  }

  override def prepareForTriggerAvailableNow(): Unit = {
    availableNowCutoff = Some(System.currentTimeMillis())
    logInfo(s"Trigger.AvailableNow: reading records that arrived up to ${availableNowCutoff.get}")
  }

  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    val start = KinesisSourceOffset.from(startOffset)
    planner.checkStreams(start)
    val readable = planner.readableShards(start)
    if (readable.isEmpty) return unchanged(start)
    val idle = !lastFetchAdvanced && System.nanoTime() - lastFetchNanos < IdleFetchInterval.toNanos
    if (idle && availableNowCutoff.isEmpty) return unchanged(start)

    val (maxRecords, maxBytes) = FetchPlanner.budgets(limit, readable.size)
    val requests = readable.map(k => FetchRequest(k, start.get(k).getOrElse(TrimHorizon), maxRecords, maxBytes))
    val groups = planner.groups(requests, lastResults)
    val sc = SparkSession.active.sparkContext
    var results = FetchJob.run(sc, sourceId, config, groups, availableNowCutoff)
    // AvailableNow ends at the first batch with nothing new: make sure "nothing" means every shard is caught up,
    // not that a throttled fetch ran out of time.
    var rounds = 1
    while (availableNowCutoff.isDefined && !results.exists(advanced) && results.exists(!_.caughtUp) && rounds < 5) {
      results = FetchJob.run(sc, sourceId, config, groups, availableNowCutoff)
      rounds += 1
    }
    lastFetchNanos = System.nanoTime()
    lastFetchAdvanced = results.exists(advanced)
    lastResults = results
    if (results.exists(_.last == ShardEnd)) discovery.invalidate()
    if (!lastFetchAdvanced) unchanged(start)
    else KinesisSourceOffset(start.positions ++ results.filter(advanced).map(r => r.key -> r.last))
  }

  override def planInputPartitions(startOffset: Offset, endOffset: Offset): Array[InputPartition] = {
    val start = KinesisSourceOffset.from(startOffset)
    val end = KinesisSourceOffset.from(endOffset)
    val locations = lastResults.map(r => r.key -> r.location).toMap
    val ranges = end.positions.toSeq.sortBy(_._1).flatMap { case (key, to) =>
      val from = start.get(key).getOrElse(TrimHorizon)
      if (from == to) None else Some(ShardRange(key, from, to))
    }
    planner.taskGroups(ranges)(_.key).map { group =>
      KinesisInputPartition(sourceId, config, group, locations.get(group.head.key)): InputPartition
    }.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = KinesisPartitionReaderFactory

  override def deserializeOffset(json: String): Offset = KinesisSourceOffset.fromJson(json)

  override def commit(end: Offset): Unit = ()

  override def stop(): Unit = ShardBuffers.release(sourceId)

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val behind = lastResults.flatMap(_.millisBehindLatest)
    val shards = discovery.shards().values
    val m = Map(
      "recordsFetched" -> lastResults.map(_.records).sum.toString,
      "bytesFetched" -> lastResults.map(_.bytes).sum.toString,
      "kinesisCalls" -> lastResults.map(_.calls.calls).sum.toString,
      "retries" -> lastResults.map(_.calls.retries).sum.toString,
      "throttledCalls" -> lastResults.map(_.calls.throttled).sum.toString,
      "openShards" -> shards.count(!_.closed).toString,
      "closedShards" -> shards.count(_.closed).toString) ++
      (if (behind.isEmpty) Map.empty[String, String] else Map(
        "avgMillisBehindLatest" -> (behind.sum / behind.size).toString,
        "maxMillisBehindLatest" -> behind.max.toString,
        "minMillisBehindLatest" -> behind.min.toString))
    m.asJava
  }

  override def toString: String = s"KinesisMicroBatchStream[${config.streams.mkString(",")}]"

  private def advanced(r: FetchResult): Boolean = r.last != r.from
}

object KinesisMicroBatchStream {
  /** While nothing arrives, how often a fetch looks for new records. */
  val IdleFetchInterval: java.time.Duration = java.time.Duration.ofSeconds(1)
}
