package io.github.sparkkinesis.sink

import org.apache.spark.sql.connector.metric.{CustomAvgMetric, CustomMetric, CustomSumMetric, CustomTaskMetric}

/**
 * The sink's Spark custom metrics (SQL tab of the Spark UI, per write). Spark builds the driver-side classes
 * by name, so each needs a public no-argument constructor.
 */
object SinkMetrics {
  val RecordsWritten = "recordsWritten"
  val BytesWritten = "bytesWritten"
  val ThrottledRecords = "throttledRecords"
  val RetriedRecords = "retriedRecords"
  val BatchSize = "batchSize"
  val FlowControlDelay = "flowControlDelayMs"
  val UserRecordsWritten = "userRecordsWritten"
  val AggregatesWritten = "aggregatesWritten"
  val RecordsPerAggregate = "recordsPerAggregate"
  val ReroutedRecords = "aggregationReroutedRecords"
  val Requests = "putRecordsRequests"
  val RecordsPerRequest = "recordsPerRequest"
  val HeldBytesPeak = "heldBytesPeak"
  val PaceStartShare = "paceStartShare"

  def supported: Array[CustomMetric] = Array(
    new RecordsWrittenMetric,
    new BytesWrittenMetric,
    new ThrottledRecordsMetric,
    new RetriedRecordsMetric,
    new BatchSizeMetric,
    new FlowControlDelayMetric,
    new UserRecordsWrittenMetric,
    new AggregatesWrittenMetric,
    new RecordsPerAggregateMetric,
    new ReroutedRecordsMetric,
    new RequestsMetric,
    new RecordsPerRequestMetric,
    new HeldBytesPeakMetric,
    new PaceStartShareMetric
  )
}

/** Spark sums these over tasks. */
abstract class SinkSumMetric(metricName: String, text: String) extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

class RecordsWrittenMetric extends SinkSumMetric(SinkMetrics.RecordsWritten, "records written to Kinesis")
class BytesWrittenMetric
  extends SinkSumMetric(SinkMetrics.BytesWritten, "bytes written to Kinesis (data plus partition keys)")
class ThrottledRecordsMetric
  extends SinkSumMetric(SinkMetrics.ThrottledRecords, "records Kinesis refused for throughput (resent)")
class RetriedRecordsMetric extends SinkSumMetric(SinkMetrics.RetriedRecords, "records resent after a per-record failure")

class UserRecordsWrittenMetric
  extends SinkSumMetric(SinkMetrics.UserRecordsWritten, "user records written (alone or inside KPL aggregates)")
class AggregatesWrittenMetric extends SinkSumMetric(SinkMetrics.AggregatesWritten, "KPL aggregates written")
class ReroutedRecordsMetric extends SinkSumMetric(
    SinkMetrics.ReroutedRecords,
    "user records sent again: a reshard put their aggregate in a shard that does not hold them all")

class RequestsMetric extends SinkSumMetric(SinkMetrics.Requests, "PutRecords requests sent (resends included)")

/** Small requests (input slower than a round trip, or flow control cutting batches) show here. */
class RecordsPerRequestMetric extends AverageOfActiveTasks(
    SinkMetrics.RecordsPerRequest,
    "records per PutRecords request (average over tasks that sent)")

/** The figure to compare with the documented bound: (maxInFlightRequests + 4) × maxBytesPerRequest. */
class HeldBytesPeakMetric extends MaxOverTasks(
    SinkMetrics.HeldBytesPeak,
    "most record bytes a task held at once, all its streams (max over tasks)")

/**
 * What the driver told the executors about each other (docs/design/sink-flow-control.md, "Several executors"): the
 * share every executor's shard paces start at. Tasks of one write all get the same share.
 */
class PaceStartShareMetric extends MaxOverTasks(
    SinkMetrics.PaceStartShare,
    "share of each shard's write quota an executor's paces start at, per mille: 1000 / executors writing " +
      "(0: one JVM writes, unpaced until refused)"
  )

/** The largest value any task reports. */
abstract class MaxOverTasks(metricName: String, text: String) extends CustomMetric {
  override def name(): String = metricName
  override def description(): String = text
  override def aggregateTaskMetrics(taskMetrics: Array[Long]): String =
    if (taskMetrics.isEmpty) "0" else taskMetrics.max.toString
}

/** A per-task ratio averaged over the tasks that had any (a task that sent nothing does not pull it down). */
abstract class AverageOfActiveTasks(metricName: String, text: String) extends CustomMetric {
  override def name(): String = metricName
  override def description(): String = text
  override def aggregateTaskMetrics(taskMetrics: Array[Long]): String = {
    val active = taskMetrics.filter(_ > 0)
    if (active.isEmpty) "0" else (active.sum / active.length).toString
  }
}

/** Tasks that wrote no aggregate (aggregation off, or only records sent alone) do not pull the average down. */
class RecordsPerAggregateMetric extends AverageOfActiveTasks(
    SinkMetrics.RecordsPerAggregate,
    "user records per KPL aggregate (average over tasks that wrote aggregates)")

class BatchSizeMetric extends CustomAvgMetric {
  override def name(): String = SinkMetrics.BatchSize
  override def description(): String = "PutRecords batch size allowed by flow control (average over tasks)"
}

/** The largest pause any task is inserting: the figure that explains a slow write. */
class FlowControlDelayMetric
  extends MaxOverTasks(SinkMetrics.FlowControlDelay, "flow-control pause between sends, ms (max over tasks)")

/** One writer task's counters; only the task's own thread touches them. */
final class SinkTaskMetrics {
  var recordsWritten = 0L
  var bytesWritten = 0L
  var throttledRecords = 0L
  var retriedRecords = 0L
  var batchSize = 0L
  var flowControlDelayMs = 0L
  var userRecordsWritten = 0L
  var aggregatesWritten = 0L
  /** User records inside the aggregates written (records sent alone not counted). */
  var aggregatedRecords = 0L
  var reroutedRecords = 0L
  var requests = 0L
  /** Records put in requests, each send of a resent record counted. */
  var sentRecords = 0L
  var heldBytesPeak = 0L
  /** The driver's [[driver.WriterShare]] for this write, per mille; 0 for none. */
  var paceStartShare = 0L

  def values: Array[CustomTaskMetric] = Array(
    SinkTaskMetrics.metric(SinkMetrics.RecordsWritten, recordsWritten),
    SinkTaskMetrics.metric(SinkMetrics.BytesWritten, bytesWritten),
    SinkTaskMetrics.metric(SinkMetrics.ThrottledRecords, throttledRecords),
    SinkTaskMetrics.metric(SinkMetrics.RetriedRecords, retriedRecords),
    SinkTaskMetrics.metric(SinkMetrics.BatchSize, batchSize),
    SinkTaskMetrics.metric(SinkMetrics.FlowControlDelay, flowControlDelayMs),
    SinkTaskMetrics.metric(SinkMetrics.UserRecordsWritten, userRecordsWritten),
    SinkTaskMetrics.metric(SinkMetrics.AggregatesWritten, aggregatesWritten),
    SinkTaskMetrics.metric(
      SinkMetrics.RecordsPerAggregate,
      if (aggregatesWritten == 0) 0L else aggregatedRecords / aggregatesWritten),
    SinkTaskMetrics.metric(SinkMetrics.ReroutedRecords, reroutedRecords),
    SinkTaskMetrics.metric(SinkMetrics.Requests, requests),
    SinkTaskMetrics.metric(SinkMetrics.RecordsPerRequest, if (requests == 0) 0L else sentRecords / requests),
    SinkTaskMetrics.metric(SinkMetrics.HeldBytesPeak, heldBytesPeak),
    SinkTaskMetrics.metric(SinkMetrics.PaceStartShare, paceStartShare)
  )
}

object SinkTaskMetrics {
  private def metric(metricName: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = v
  }
}
