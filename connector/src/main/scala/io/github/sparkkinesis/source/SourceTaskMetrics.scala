package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

// Spark's UI re-creates each metric by class name with a zero-argument constructor: one top-level class each.

final class KinesisRecordsReadMetric extends CustomSumMetric {
  override def name(): String = SourceTaskMetrics.RecordsRead
  override def description(): String = "Kinesis user records read"
}

final class KinesisBytesReadMetric extends CustomSumMetric {
  override def name(): String = SourceTaskMetrics.BytesRead
  override def description(): String = "Kinesis bytes read (data and partition keys)"
}

final class KinesisRangesReReadMetric extends CustomSumMetric {
  override def name(): String = SourceTaskMetrics.RangesReRead
  override def description(): String = "shard ranges re-read from Kinesis (not buffered on the executor)"
}

final class KinesisMalformedAggregatesMetric extends CustomSumMetric {
  override def name(): String = SourceTaskMetrics.MalformedAggregates
  override def description(): String = "malformed KPL aggregates read whole (a producer's fault; nothing lost)"
}

/** The scan's metrics in the Spark UI (SQL tab), summed over the batch's tasks. */
object SourceTaskMetrics {
  val RecordsRead = "kinesisRecordsRead"
  val BytesRead = "kinesisBytesRead"
  val RangesReRead = "kinesisRangesReRead"
  val MalformedAggregates = "kinesisMalformedAggregates"

  def supported: Array[CustomMetric] =
    Array(
      new KinesisRecordsReadMetric,
      new KinesisBytesReadMetric,
      new KinesisRangesReReadMetric,
      new KinesisMalformedAggregatesMetric)

  def values(records: Long, bytes: Long, reRead: Long, malformed: Long): Array[CustomTaskMetric] = Array(
    task(RecordsRead, records),
    task(BytesRead, bytes),
    task(RangesReRead, reRead),
    task(MalformedAggregates, malformed))

  private def task(metric: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metric
    override def value(): Long = v
  }
}
