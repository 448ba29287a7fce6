package io.github.sparkkinesis.source
package driver

import software.amazon.awssdk.services.kinesis.model.{Consumer, ConsumerStatus}

/**
 * Kinesis' limit of enhanced fan-out consumers per stream, told apart from its rates. RegisterStreamConsumer answers
 * LimitExceededException both when the stream has as many consumers as it allows (20; 50 on On-demand Advantage
 * streams: the API does not say which a stream has, so no number is assumed) and when calls come too fast (5 a
 * second per account, 5 consumers CREATING at once). A rate passes; the limit stays until a consumer goes.
 */
object ConsumerLimit {
  /** The smallest limit a stream has: with fewer consumers, LimitExceededException is a rate. */
  val MinPerStream = 20
  /** Consumers Kinesis creates at once: with as many CREATING, a refusal may be that rate. */
  val MaxCreatingAtOnce = 5
  /**
   * How long refusals must keep looking like the limit before a registration gives up: long enough for every
   * consumer a stream can have (50) to register at Kinesis' 5 a second, so queries starting together on a stream
   * that has room wait their turn; a stream full of consumers stays full.
   */
  val Persistence: java.time.Duration = java.time.Duration.ofSeconds(10)

  /**
   * Whether a LimitExceededException for registering `name` on a stream that lists `consumers` (after the refusal)
   * is the stream's limit: ours is not among them, none is being deleted (it would free a place), too few are
   * CREATING for the concurrency rate to be the cause, and there are at least as many as any stream allows.
   */
  def looksReached(consumers: Seq[Consumer], name: String): Boolean =
    !consumers.exists(_.consumerName() == name) &&
      !consumers.exists(_.consumerStatus() == ConsumerStatus.DELETING) &&
      consumers.count(_.consumerStatus() == ConsumerStatus.CREATING) < MaxCreatingAtOnce &&
      consumers.size >= MinPerStream
}
