package io.github.sparkkinesis.source
package driver

import io.github.sparkkinesis.RowLayout
import io.github.sparkkinesis.options.OptionReader
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

final class KinesisScanBuilder(options: CaseInsensitiveStringMap, layout: RowLayout) extends ScanBuilder {
  override def build(): Scan = new KinesisScan(SourceConfig(OptionReader(options)).copy(layout = layout))
}

final class KinesisScan(config: SourceConfig) extends Scan {
  override def readSchema(): StructType = config.layout.schema
  override def description(): String = s"Kinesis ${config.streams.mkString(", ")}"
  override def supportedCustomMetrics(): Array[CustomMetric] = SourceTaskMetrics.supported
  /**
   * One plan per scan: Spark asks each copy of its scan node for the batch (a noop write planned it twice), and each
   * plan of a batch read lists, probes and waits for Kinesis' clock anew, or on the snapshot path reads every shard.
   */
  private lazy val batch: Batch = new KinesisBatch(config.forBatch)
  override def toBatch: Batch = batch
  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    SparkLineSource.microBatchStream(config, checkpointLocation)
}
