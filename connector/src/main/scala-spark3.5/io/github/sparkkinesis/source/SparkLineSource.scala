package io.github.sparkkinesis.source

import io.github.sparkkinesis.options.KinesisOptionException
import io.github.sparkkinesis.options.KinesisOptions.MaxBytesPerTrigger
import io.github.sparkkinesis.source.driver.KinesisMicroBatchStream
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.connector.read.streaming.ReadLimit

/**
 * The Spark 3.5 build's side of what the source uses of Spark 4 (the Spark 4 build has its own file of this name).
 * Spark 3.5 has no byte limit (`ReadLimit.maxBytes` is Spark 4.0+), so `maxBytesPerTrigger` is refused when the
 * options are read, and no real-time mode (Spark 4.1+): the stream does not offer it, so no real-time task is planned.
 */
private[sparkkinesis] object SparkLineSource {
  def maxBytesPerTrigger(bytes: Long): Long = throw new KinesisOptionException(
    s"Option '${MaxBytesPerTrigger.key}' (value '$bytes') needs Spark 4.0 or later (byte limits, ReadLimit.maxBytes); " +
      s"this is the connector for Spark 3.5 (running on Spark ${org.apache.spark.SPARK_VERSION}): use " +
      "maxRecordsPerTrigger, or Spark 4.")

  /** Never reached: [[maxBytesPerTrigger]] refused the option. */
  def maxBytes(bytes: Long): ReadLimit =
    throw new IllegalStateException(s"Spark 3.5 has no byte limit (asked for $bytes bytes)")

  def bytesOf(limit: ReadLimit): Option[Long] = None

  def microBatchStream(config: SourceConfig, checkpointLocation: String): KinesisMicroBatchStream =
    new KinesisMicroBatchStream(config, checkpointLocation)

  def realTimeReader(partition: RealTimeInputPartition): PartitionReader[InternalRow] =
    throw new UnsupportedOperationException("Real-time mode needs Spark 4.1 or later; this is the connector for " +
      s"Spark 3.5 (running on Spark ${org.apache.spark.SPARK_VERSION}).")
}
