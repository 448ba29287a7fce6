package io.github.sparkkinesis.source

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.unsafe.types.UTF8String

object KinesisPartitionReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new KinesisPartitionReader(partition.asInstanceOf[KinesisInputPartition])
}

/** Emits a partition's shard ranges one after another, each in sequence order, as rows of the source schema. */
final class KinesisPartitionReader(partition: KinesisInputPartition) extends PartitionReader[InternalRow] {
  private val ranges = partition.ranges.iterator
  private var range: ShardRange = _
  private var records: Iterator[UserRecord] = Iterator.empty
  private var current: InternalRow = _
  private var recordsRead = 0L
  private var bytesRead = 0L
  private var rangesReRead = 0L

  override def next(): Boolean = {
    while (!records.hasNext && ranges.hasNext) {
      range = ranges.next()
      val (next, reRead) = RangeReader.read(partition.sourceId, partition.config, range)
      records = next
      if (reRead) rangesReRead += 1
    }
    if (!records.hasNext) return false
    val r = records.next()
    recordsRead += 1
    bytesRead += r.data.length + r.partitionKey.length
    current = new GenericInternalRow(Array[Any](
      UTF8String.fromString(r.partitionKey),
      r.data,
      UTF8String.fromString(range.key.stream),
      UTF8String.fromString(range.key.shardId),
      UTF8String.fromString(r.sequenceNumber),
      r.subSequenceNumber,
      r.arrivalMillis * 1000L))
    true
  }

  override def get(): InternalRow = current

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    SourceTaskMetrics.values(recordsRead, bytesRead, rangesReRead)

  override def close(): Unit = ()
}
