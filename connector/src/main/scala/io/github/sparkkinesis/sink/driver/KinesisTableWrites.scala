package io.github.sparkkinesis.sink
package driver

import java.util

import org.apache.spark.sql.connector.catalog.{SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}

/**
 * The write side of the `kinesis` table. The input schema is the sink's (SPEC §3), not the source's, so the
 * table accepts any schema and the sink checks the columns it needs itself.
 *
 * A streaming query keeps one table as its sink for its lifetime, and Spark asks that table for the metrics of
 * `StreamingQueryProgress.sink`: the table holds the last committed micro-batch's totals for it.
 */
trait KinesisTableWrites extends SupportsWrite with ReportsSinkMetrics {
  private val lastEpoch = new SinkProgress

  /** The input column naming each row's target stream: the one the source's rows carry under the same format name. */
  protected def streamColumn: String

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new KinesisWriteBuilder(info, lastEpoch, streamColumn)

  override def metrics(): util.Map[String, String] = lastEpoch.metrics
}

object KinesisTableWrites {
  def capabilities: util.Set[TableCapability] = util.EnumSet.of(
    TableCapability.BATCH_WRITE,
    TableCapability.STREAMING_WRITE,
    TableCapability.ACCEPT_ANY_SCHEMA)
}
