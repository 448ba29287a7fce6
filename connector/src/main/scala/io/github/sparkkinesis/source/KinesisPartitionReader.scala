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
 * per-range strings are encoded once per range, keys and sequence numbers are wrapped where the record block
 * holds them, longs are stored unboxed; the payload is copied once, into the array the row's binary column owns.
 */
final class KinesisPartitionReader(partition: KinesisInputPartition) extends PartitionReader[InternalRow] {
  private val ranges = partition.ranges.iterator
  private var blocks: Iterator[RecordBlock] = Iterator.empty
  private var block: RecordBlock = RecordBlock.empty
  private var index = 0
  private val row = new SpecificInternalRow(KinesisSchema.schema.map(_.dataType))
  private var recordsRead = 0L
  private var bytesRead = 0L
  private var rangesReRead = 0L

  override def next(): Boolean = {
    while (index >= block.size && (blocks.hasNext || ranges.hasNext)) {
      if (blocks.hasNext) {
        block = blocks.next()
        index = 0
      } else {
        val range = ranges.next()
        val (next, reRead) = RangeReader.read(partition.sourceId, partition.config, range)
        blocks = next
        if (reRead) rangesReRead += 1
        row.update(2, UTF8String.fromString(range.key.stream))
        row.update(3, UTF8String.fromString(range.key.shardId))
      }
    }
    if (index >= block.size) return false
    val i = index
    index += 1
    recordsRead += 1
    bytesRead += block.recordBytes(i)
    row.update(0, block.partitionKey(i))
    row.update(1, block.data(i))
    row.update(4, block.sequenceNumberUtf8(i))
    row.setLong(5, block.subSequenceNumber(i))
    row.setLong(6, block.arrivalMillis(i) * 1000L)
    true
  }

  override def get(): InternalRow = row

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    SourceTaskMetrics.values(recordsRead, bytesRead, rangesReRead)

  override def close(): Unit = ()
}
