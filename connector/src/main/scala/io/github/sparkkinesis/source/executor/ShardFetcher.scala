package io.github.sparkkinesis.source
package executor

import java.util.concurrent.CompletableFuture

/**
 * A read strategy behind a [[ShardFeed]]: how one shard's next records reach the executor. The [[Prefetcher]]
 * asks for them one answer at a time, only when its buffer has room, whichever the strategy.
 */
trait ShardFetcher {
  /** The next answer: at most `limit` records where the strategy can say (GetRecords), whatever came otherwise. */
  def poll(limit: Int): CompletableFuture[Poll]

  /**
   * Records are pushed by Kinesis (enhanced fan-out): an answer may take as long as the shard is quiet, so it
   * holds none of the JVM's call slots, and needs no pacing (Kinesis paces the push).
   */
  def pushed: Boolean

  /** The feed stopped: let go of what the strategy holds open. */
  def close(): Unit = ()
}
