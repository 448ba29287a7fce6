package io.github.sparkkinesis.source
package executor

import io.github.sparkkinesis.RowLayout
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow
import org.apache.spark.unsafe.types.UTF8String

/**
 * The one mutable row a partition reader hands to Spark (Spark copies each row into its own format before asking
 * for the next), and what it counted. The stream and shard strings are encoded once per shard, keys and sequence
 * numbers are wrapped where the record block holds them, longs are stored unboxed, and the payload is the block's
 * own array when the block adopted it (large payloads), else copied once into an array of its length.
 *
 * Values go to the ordinals of the query's [[RowLayout]]; a value the layout has no column for is not computed.
 */
private[source] final class SourceRow(layout: RowLayout) {
  val row = new SpecificInternalRow(layout.schema.map(_.dataType))
  var records = 0L
  var bytes = 0L
  /** Malformed KPL aggregates among the records, each read whole as one record. */
  var malformedAggregates = 0L
  private val partitionKeyAt = layout.partitionKey
  private val dataAt = layout.data
  private val streamAt = layout.stream
  private val shardIdAt = layout.shardId
  private val sequenceNumberAt = layout.sequenceNumber
  private val arrivalAt = layout.approximateArrivalTimestamp
  private val subSequenceNumberAt = layout.subSequenceNumber

  /** The shard the next records come from, encoded once by the caller ([[SourceRow.shardColumns]]). */
  def shard(columns: (UTF8String, UTF8String)): Unit = {
    row.update(streamAt, columns._1)
    if (shardIdAt >= 0) row.update(shardIdAt, columns._2)
  }

  def record(block: RecordBlock, i: Int): Unit = {
    records += 1
    bytes += block.recordBytes(i)
    if (block.isMalformedAggregate(i)) malformedAggregates += 1
    row.update(partitionKeyAt, block.partitionKey(i))
    row.update(dataAt, block.data(i))
    row.update(sequenceNumberAt, block.sequenceNumberUtf8(i))
    row.setLong(arrivalAt, block.arrivalMillis(i) * 1000L)
    if (subSequenceNumberAt >= 0) row.setLong(subSequenceNumberAt, block.subSequenceNumber(i))
  }
}

private[source] object SourceRow {
  /** The stream column's value (the name or ARN the user gave, [[SourceConfig.streamColumnValue]]) and the shard id. */
  def shardColumns(config: SourceConfig, key: ShardKey): (UTF8String, UTF8String) =
    (UTF8String.fromString(config.streamColumnValue(key.stream)), UTF8String.fromString(key.shardId))
}
