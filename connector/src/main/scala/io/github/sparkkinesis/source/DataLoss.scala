package io.github.sparkkinesis.source

import java.time.Instant

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging

/**
 * The one rule for records a query can no longer read (expired past the stream's retention, or the stream was
 * deleted and created again). `failOnDataLoss=true` (the default) fails the query, naming the stream, the shard and
 * the positions; `false` logs a warning saying what is skipped and where reading goes on.
 */
object DataLoss extends Logging {

  /**
   * @param lost    what can no longer be read, with its positions
   * @param goingOn where reading goes on instead ("from ..."), said in the error's hint and in the warning
   */
  def apply(config: SourceConfig, key: ShardKey, lost: String, goingOn: String, cause: Throwable = null): Unit = {
    val what = s"Data loss in Kinesis stream '${key.stream}', shard ${key.shardId}: $lost"
    if (config.failOnDataLoss) {
      throw new IllegalStateException(
        s"$what. Set failOnDataLoss=false to skip what is lost and go on $goingOn.",
        cause)
    }
    logWarning(s"$what. failOnDataLoss=false: going on $goingOn.")
  }

  /** A position as a user reads it in a message. */
  def show(position: ShardPosition): String = position match {
    case After(seq, -1L) => s"at sequence number $seq"
    case After(seq, Long.MaxValue) => s"after sequence number $seq"
    case After(seq, 0L) => s"after sequence number $seq"
    case After(seq, sub) => s"after sequence number $seq sub-record $sub"
    case AtTimestamp(ms) => s"at ${Instant.ofEpochMilli(ms)}"
    case TrimHorizon => "at the trim horizon"
    case ShardEnd => "at the shard's end"
  }
}
