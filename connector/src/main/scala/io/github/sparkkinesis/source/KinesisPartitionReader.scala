package io.github.sparkkinesis.source

import io.github.sparkkinesis.KinesisSchema
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.unsafe.types.UTF8String

object KinesisPartitionReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new KinesisPartitionReader(partition.asInstanceOf[KinesisInputPartition])
}

/**
 * Emits a partition's shard ranges one after another, each in sequence order, as rows of the source schema.
 * One mutable row is reused (Spark copies each row into its own format before asking for the next): the
 * per-range strings are encoded once per range, longs are stored unboxed, the payload is not copied.
 */
final class KinesisPartitionReader(partition: KinesisInputPartition) extends PartitionReader[InternalRow] {
  private val ranges = partition.ranges.iterator
  private var records: Iterator[UserRecord] = Iterator.empty
  private val row = new SpecificInternalRow(KinesisSchema.schema.map(_.dataType))
  private var recordsRead = 0L
  private var bytesRead = 0L
  private var rangesReRead = 0L

  override def next(): Boolean = {
    while (!records.hasNext && ranges.hasNext) {
      val range = ranges.next()
      val (next, reRead) = RangeReader.read(partition.sourceId, partition.config, range)
      records = next
      if (reRead) rangesReRead += 1
      row.update(2, UTF8String.fromString(range.key.stream))
      row.update(3, UTF8String.fromString(range.key.shardId))
    }
    if (!records.hasNext) return false
    val r = records.next()
    recordsRead += 1
    bytesRead += r.data.length + r.partitionKey.length
    row.update(0, UTF8String.fromString(r.partitionKey))
    row.update(1, r.data)
    row.update(4, UTF8String.fromString(r.sequenceNumber))
    row.setLong(5, r.subSequenceNumber)
    row.setLong(6, r.arrivalMillis * 1000L)
    true
  }

  override def get(): InternalRow = row

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    SourceTaskMetrics.values(recordsRead, bytesRead, rangesReRead)

  override def close(): Unit = ()
}
