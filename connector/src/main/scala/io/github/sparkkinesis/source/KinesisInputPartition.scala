package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.read.InputPartition

/**
 * One shard's part of a batch: the records after `from`, up to and including `to`; `hashKeys`, the shard's range
 * when known, so that a re-read skips the misplaced KPL aggregates the prefetch skipped. `toIsRecord`: `to` is a
 * record a fetch returned, which a re-read must meet; false for an end the user gave (`endingPosition`), which a
 * re-read may pass between two records. A batch read planned without reading ([[driver.ShardEndProbe]]) may end
 * sooner: `before`, a record the plan saw, which the read meets and does not return; `arrivedBy`, the shard's tip
 * or its first record that arrived after this time (Kinesis' clock had passed it when the plan was made).
 */
final case class ShardRange(
    key: ShardKey,
    from: ShardPosition,
    to: ShardPosition,
    hashKeys: Option[HashKeySpan] = None,
    toIsRecord: Boolean = true,
    before: Option[String] = None,
    arrivedBy: Option[Long] = None)

object ShardRange {
  /**
   * The range a batch reads in a shard, if any. A batch ends each shard it read at a record or at the shard's end;
   * an end at `trim_horizon` or `at_timestamp` is a shard the batch did not read (listed, not yet fetched), even
   * when the start differs (a pinned start lost from the checkpoint and made anew): reading such a "range" would
   * mean reading an open shard until it ends, a task that never finishes.
   */
  def planned(
      key: ShardKey,
      from: ShardPosition,
      to: ShardPosition,
      hashKeys: Option[HashKeySpan]): Option[ShardRange] =
    to match {
      case _: ShardPosition.After | ShardPosition.ShardEnd if from != to => Some(ShardRange(key, from, to, hashKeys))
      case _ => None
    }
}

/**
 * A Spark task's share of a batch: a few shard ranges, read in order, placed where they were fetched. `oneRead`: a
 * batch read planned without reading, whose task reads its ranges from Kinesis, all at once ([[executor.RangeFetch]]),
 * and emits them in turns; `parents(i)`: the indexes of range `i`'s parents among `ranges` (it comes after them).
 */
final case class KinesisInputPartition(
    sourceId: String,
    config: SourceConfig,
    ranges: Seq[ShardRange],
    location: Option[String],
    oneRead: Boolean = false,
    parents: Seq[Seq[Int]] = Nil) extends InputPartition {
  override def preferredLocations(): Array[String] = location.toArray
}
