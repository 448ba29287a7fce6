package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.PartitionOffset

/**
 * A real-time task's shards, each from where the batch starts, placed where they were read last, with their hash
 * key ranges where the listing knew them.
 */
final case class RealTimeInputPartition(
    sourceId: String,
    config: SourceConfig,
    starts: Seq[(ShardKey, ShardPosition)],
    location: Option[String],
    hashKeys: Map[ShardKey, HashKeySpan] = Map.empty) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}

/**
 * Where a real-time task got to in each of its shards, with what it read there: the driver merges the tasks'
 * into the batch's end offset and its metrics (`KinesisMicroBatchStream.mergeOffsets`).
 */
final case class RealTimePartitionOffset(shards: Seq[ShardSnapshot]) extends PartitionOffset
