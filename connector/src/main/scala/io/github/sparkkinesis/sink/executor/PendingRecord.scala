package io.github.sparkkinesis.sink
package executor

import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry

/**
 * One record the writer has accepted and not yet seen acknowledged. The request entry is built once and reused
 * for every resend.
 *
 * @param partitionKey what orders it: its partition key, or with aggregation the shard id it was packed for (all
 *                     of a shard's records then share a send lane, see [[ShardAggregator]])
 * @param size data plus partition key in bytes, what Kinesis counts against its record and request limits
 * @param packed the user records inside, when it is a KPL aggregate; null for a plain record
 */
final class PendingRecord(
    val entry: PutRecordsRequestEntry,
    val partitionKey: String,
    val size: Int,
    val packed: Packed = null) {
  /** User records it carries. */
  def userRecords: Int = if (packed == null) 1 else packed.entries.size

  /** How many times it has been sent. */
  var attempts: Int = 0

  /** The shard it was last found to go to, by [[SendPacer]]; null until pacing needs it. */
  var group: PaceGroup = null
}
