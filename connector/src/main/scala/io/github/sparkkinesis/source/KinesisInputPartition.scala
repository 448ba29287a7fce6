package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.read.InputPartition

/**
 * One shard's part of a batch: the records after `from`, up to and including `to`; `hashKeys`, the shard's range
 * when known, so that a re-read skips the misplaced KPL aggregates the prefetch skipped.
 */
final case class ShardRange(key: ShardKey, from: ShardPosition, to: ShardPosition, hashKeys: Option[HashKeySpan] = None)

/** A Spark task's share of a batch: a few shard ranges, read in order, placed where they were fetched. */
final case class KinesisInputPartition(
    sourceId: String,
    config: SourceConfig,
    ranges: Seq[ShardRange],
    location: Option[String]) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}
