package io.github.sparkkinesis.source

import io.github.sparkkinesis.KinesisSchema
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow
import org.apache.spark.unsafe.types.UTF8String

/**
 * The one mutable row a partition reader hands to Spark (Spark copies each row into its own format before asking
 * for the next), and what it counted. The stream and shard strings are encoded once per shard, keys and sequence
 * numbers are wrapped where the record block holds them, longs are stored unboxed, and the payload is the block's
 * own array when the block adopted it (large payloads), else copied once into an array of its length.
 */
private[source] final class SourceRow {
  val row = new SpecificInternalRow(KinesisSchema.schema.map(_.dataType))
  var records = 0L
  var bytes = 0L

  /** The shard the next records come from, encoded once by the caller ([[SourceRow.shardColumns]]). */
  def shard(columns: (UTF8String, UTF8String)): Unit = {
    row.update(2, columns._1)
    row.update(3, columns._2)
  }

  def record(block: RecordBlock, i: Int): Unit = {
    records += 1
    bytes += block.recordBytes(i)
    row.update(0, block.partitionKey(i))
    row.update(1, block.data(i))
    row.update(4, block.sequenceNumberUtf8(i))
    row.setLong(5, block.arrivalMillis(i) * 1000L)
    row.setLong(6, block.subSequenceNumber(i))
  }
}

private[source] object SourceRow {
  def shardColumns(key: ShardKey): (UTF8String, UTF8String) =
    (UTF8String.fromString(key.stream), UTF8String.fromString(key.shardId))
}
