package io.github.sparkkinesis.source

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.connector.read.streaming.{ReadLimit, ReadMaxBytes, SupportsRealTimeMode}
import io.github.sparkkinesis.source.executor.RealTimeReader

/**
 * What the source uses of Spark 4 that Spark 3.5 lacks (the Spark 3.5 build has its own file of this name):
 * admission control by bytes (`ReadLimit.maxBytes`, Spark 4.0+) and real-time mode (Spark 4.1+).
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

  def realTimeReader(partition: RealTimeInputPartition): PartitionReader[InternalRow] = new RealTimeReader(partition)

  /** [[KinesisMicroBatchStream]] implements the methods of real-time mode. */
  trait RealTimeMode extends SupportsRealTimeMode
}
