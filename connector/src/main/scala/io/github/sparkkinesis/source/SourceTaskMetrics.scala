package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** The scan's metrics in the Spark UI (SQL tab), summed over the batch's tasks. */
object SourceTaskMetrics {
  val RecordsRead = "kinesisRecordsRead"
  val BytesRead = "kinesisBytesRead"
  val RangesReRead = "kinesisRangesReRead"

  private final class Sum(name: String, description: String) extends CustomSumMetric {
    override def name(): String = name
    override def description(): String = description
  }

  val supported: Array[CustomMetric] = Array(
    new Sum(RecordsRead, "Kinesis user records read"),
    new Sum(BytesRead, "Kinesis bytes read (data and partition keys)"),
    new Sum(RangesReRead, "shard ranges re-read from Kinesis (not buffered on the executor)"))

  def values(records: Long, bytes: Long, reRead: Long): Array[CustomTaskMetric] = Array(
    task(RecordsRead, records), task(BytesRead, bytes), task(RangesReRead, reRead))

  private def task(metric: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metric
    override def value(): Long = v
  }
}
