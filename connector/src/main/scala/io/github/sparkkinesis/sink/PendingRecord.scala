package io.github.sparkkinesis.sink

import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry

/**
 * One record the writer has accepted and not yet seen acknowledged. The request entry is built once and reused
 * for every resend.
 *
 * @param size data plus partition key in bytes, what Kinesis counts against its record and request limits
 */
final class PendingRecord(val entry: PutRecordsRequestEntry, val partitionKey: String, val size: Int) {
  /** How many times it has been sent. */
  var attempts: Int = 0

  /** The shard it was last found to go to, by [[SendPacer]]; null until pacing needs it. */
  var group: PaceGroup = null
}
