package io.github.sparkkinesis.source
package executor

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

object KinesisPartitionReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = partition match {
    case p: KinesisInputPartition => new KinesisPartitionReader(p)
    case p: RealTimeInputPartition => SparkLineSource.realTimeReader(p)
  }
}

/** Emits a partition's shard ranges one after another, each in sequence order, as rows of the source schema. */
final class KinesisPartitionReader(partition: KinesisInputPartition) extends PartitionReader[InternalRow] {
  private val ranges = partition.ranges.iterator.zipWithIndex
  /** A one-read batch task reads all its ranges from the start. */
  private val fetch = if (partition.oneRead) Some(new RangeFetch(partition.config, partition.ranges)) else None
  private var blocks: Iterator[RecordBlock] = Iterator.empty
  private var block: RecordBlock = RecordBlock.empty
  private var index = 0
  private val out = new SourceRow(partition.config.layout)
  private var rangesReRead = 0L

  override def next(): Boolean = {
    while (index >= block.size && (blocks.hasNext || ranges.hasNext)) {
      if (blocks.hasNext) {
        block = blocks.next()
        index = 0
      } else {
        val (range, i) = ranges.next()
        val (next, reRead) = fetch.fold(RangeReader.read(partition.sourceId, partition.config, range))(f =>
          (f.blocks(i), false))
        blocks = next
        if (reRead) rangesReRead += 1
        out.shard(SourceRow.shardColumns(partition.config, range.key))
      }
    }
    if (index >= block.size) return false
    out.record(block, index)
    index += 1
    true
  }

  override def get(): InternalRow = out.row

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    SourceTaskMetrics.values(out.records, out.bytes, rangesReRead, out.malformedAggregates)

  override def close(): Unit = fetch.foreach(_.close())
}
