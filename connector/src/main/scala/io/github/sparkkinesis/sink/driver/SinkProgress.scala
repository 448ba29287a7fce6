package io.github.sparkkinesis.sink
package driver

import java.util

import org.apache.spark.sql.connector.write.WriterCommitMessage

/** The totals of the last committed micro-batch, as `StreamingQueryProgress.sink.metrics` shows them. */
final class SinkProgress {
  @volatile private var last: util.Map[String, String] = util.Collections.emptyMap()

  def metrics: util.Map[String, String] = last

  def committed(messages: Array[WriterCommitMessage]): Unit = {
    val tasks = messages.collect { case m: KinesisWriterCommitMessage => m }
    val totals = new util.LinkedHashMap[String, String]()
    totals.put(SinkMetrics.RecordsWritten, tasks.map(_.records).sum.toString)
    totals.put(SinkMetrics.BytesWritten, tasks.map(_.bytes).sum.toString)
    totals.put(SinkMetrics.ThrottledRecords, tasks.map(_.throttled).sum.toString)
    totals.put(SinkMetrics.RetriedRecords, tasks.map(_.retried).sum.toString)
    // Only a write that aggregates tells user records from Kinesis records.
    val aggregates = tasks.map(_.aggregates).sum
    if (aggregates > 0) {
      totals.put(SinkMetrics.UserRecordsWritten, tasks.map(_.userRecords).sum.toString)
      totals.put(SinkMetrics.AggregatesWritten, aggregates.toString)
    }
    last = util.Collections.unmodifiableMap(totals)
  }
}
