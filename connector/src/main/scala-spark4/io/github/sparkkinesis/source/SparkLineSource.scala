package io.github.sparkkinesis.source

import io.github.sparkkinesis.SparkClasses
import io.github.sparkkinesis.source.driver.{KinesisMicroBatchStream, RealTimeKinesisMicroBatchStream}
import io.github.sparkkinesis.source.executor.RealTimeReader
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.connector.read.streaming.{ReadLimit, ReadMaxBytes}

/**
 * What the source uses of Spark 4 that Spark 3.5 lacks (the Spark 3.5 build has its own file of this name):
 * admission control by bytes (`ReadLimit.maxBytes`, Spark 4.0+) and real-time mode (Spark 4.1+, which this jar
 * also serves Spark 4.0 without: see [[realTimeMode]]).
 */
private[sparkkinesis] object SparkLineSource {
  /** `maxBytesPerTrigger` as the options give it: every Spark 4 takes it. */
  def maxBytesPerTrigger(bytes: Long): Long = bytes

  def maxBytes(bytes: Long): ReadLimit = ReadLimit.maxBytes(bytes)

  /** The bytes a limit admits, when it is a byte limit. */
  def bytesOf(limit: ReadLimit): Option[Long] = limit match {
    case b: ReadMaxBytes => Some(b.maxBytes())
    case _ => None
  }

  /**
   * Whether the running Spark has real-time mode (4.1+). On Spark 4.0 no class of it may load: the stream is the
   * one without `SupportsRealTimeMode`, so Spark never plans a real-time batch.
   */
  lazy val realTimeMode: Boolean =
    SparkClasses.has("org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode")

  def microBatchStream(config: SourceConfig, checkpointLocation: String): KinesisMicroBatchStream =
    if (realTimeMode) RealTimeKinesisMicroBatchStream(config, checkpointLocation)
    else new KinesisMicroBatchStream(config, checkpointLocation)

  def realTimeReader(partition: RealTimeInputPartition): PartitionReader[InternalRow] =
    if (realTimeMode) new RealTimeReader(partition)
    else throw new UnsupportedOperationException("Real-time mode needs Spark 4.1 or later; this Spark is " +
      s"${org.apache.spark.SPARK_VERSION}: use a processing-time trigger, or Spark 4.1+.")
}
