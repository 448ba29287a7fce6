package io.github.sparkkinesis.source

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
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

  override def next(): Boolean = {
    while (!records.hasNext && ranges.hasNext) {
      range = ranges.next()
      records = RangeReader.read(partition.sourceId, partition.config, range)
    }
    if (!records.hasNext) return false
    val r = records.next()
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

  override def close(): Unit = ()
}
