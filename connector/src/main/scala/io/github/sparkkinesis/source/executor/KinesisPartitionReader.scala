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

/**
 * Emits a partition's shard ranges as rows of the source schema, each range in sequence order: one after another,
 * or for a one-read batch task in turns ([[RangeTurns]]), a child after its parents either way.
 */
final class KinesisPartitionReader(partition: KinesisInputPartition) extends PartitionReader[InternalRow] {
  private val config = partition.config
  private var rangesReRead = 0L
  /** A one-read batch task reads all its ranges from the start. */
  private val fetch = if (partition.oneRead) Some(new RangeFetch(config, partition.ranges)) else None
  private val blocks: Iterator[(Int, RecordBlock)] = fetch match {
    case Some(f) =>
      val parents = partition.ranges.indices.map(i => partition.parents.lift(i).getOrElse(Nil))
      new RangeTurns(parents, f.blocks, RangeFetch.TurnRecords, RangeFetch.Threads)
    case None =>
      partition.ranges.iterator.zipWithIndex.flatMap { case (range, i) =>
        val (records, reRead) = RangeReader.read(partition.sourceId, config, range)
        if (reRead) rangesReRead += 1
        records.map(i -> _)
      }
  }
  private val columns = partition.ranges.map(r => SourceRow.shardColumns(config, r.key)).toArray
  private var block: RecordBlock = RecordBlock.empty
  private var index = 0
  private var shard = -1
  private val out = new SourceRow(config.layout)

  override def next(): Boolean = {
    while (index >= block.size && blocks.hasNext) {
      val (i, next) = blocks.next()
      block = next
      index = 0
      if (i != shard) { shard = i; out.shard(columns(i)) }
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
