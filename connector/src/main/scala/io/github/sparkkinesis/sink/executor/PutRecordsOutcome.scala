package io.github.sparkkinesis.sink
package executor

import java.util

import io.github.sparkkinesis.client.RetryBackoff

/**
 * What one PutRecords response means for the records it carried: which were stored, which go back for another
 * attempt, and whether the write must stop. Pure, so every branch is tested without a Kinesis that misbehaves.
 *
 * @param failed records to resend, in request order (null when none)
 * @param fatal  error codes no retry can fix, with counts
 * @param exhausted retryable codes of records that have used up `retryMaxAttempts`, with counts
 */
final class PutRecordsOutcome(
    val stored: Int,
    val storedBytes: Long,
    val throttled: Int,
    val failed: util.ArrayList[PendingRecord],
    val fatal: Map[String, Int],
    val exhausted: Map[String, Int]) {

  /** The failure to raise, if this response ends the write. */
  def error(stream: String, backoff: RetryBackoff): Option[KinesisSinkWriteException] =
    if (fatal.nonEmpty) Some(SinkErrors.undelivered(stream, fatal, failed.get(0).attempts, exhausted = false))
    else if (exhausted.nonEmpty) {
      Some(SinkErrors.undelivered(stream, exhausted, backoff.config.maxAttempts.getOrElse(0), exhausted = true))
    } else None
}

object PutRecordsOutcome {
  /** Per-record codes that mean "over the shard's (or KMS's) throughput": they drive flow control. */
  val ThrottlingCodes: Set[String] = Set("ProvisionedThroughputExceededException", "KMSThrottlingException")

  /**
   * Per-record codes worth resending. Anything else (an invalid or KMS-refused record) fails the task at once,
   * naming the code: Spark's task retry then covers a code that was transient after all, without loss.
   */
  val RetryableCodes: Set[String] = ThrottlingCodes + "InternalFailure" + "ServiceUnavailable"

  /** @param errorCode the response's error code for the i-th record of the batch, null when it was stored */
  def of(batch: util.List[PendingRecord], errorCode: Int => String, backoff: RetryBackoff): PutRecordsOutcome = {
    var stored = 0
    var storedBytes = 0L
    var throttled = 0
    var failed: util.ArrayList[PendingRecord] = null
    var fatal = Map.empty[String, Int]
    var exhausted = Map.empty[String, Int]
    var i = 0
    while (i < batch.size) {
      val record = batch.get(i)
      val code = errorCode(i)
      if (code == null) {
        stored += 1
        storedBytes += record.size
      } else {
        if (ThrottlingCodes.contains(code)) throttled += 1
        if (!RetryableCodes.contains(code)) fatal = fatal.updated(code, fatal.getOrElse(code, 0) + 1)
        else if (backoff.exhausted(record.attempts))
          exhausted = exhausted.updated(code, exhausted.getOrElse(code, 0) + 1)
        if (failed == null) failed = new util.ArrayList[PendingRecord]()
        failed.add(record)
      }
      i += 1
    }
    new PutRecordsOutcome(stored, storedBytes, throttled, failed, fatal, exhausted)
  }
}
