package io.github.sparkkinesis.source
package executor

import java.util.concurrent.atomic.LongAdder

/**
 * How this JVM's polled GetRecords calls waited for one of the [[Prefetcher]]'s call slots (from when a shard's
 * pacing allowed its call to the call's start) and how long they took, since the JVM started: calls with their
 * summed nanoseconds, the idle budget's polls ([[ShardFeed.BudgetAfterPolls]]) apart from the others. What tells
 * "the calls wait for slots" (the executor holds more shards than its slots serve at the endpoint's latency) from
 * "the endpoint answers slowly". Differences of two snapshots give a window's means.
 */
final case class CallQueueTotals(
    readCalls: Long,
    readWaitNanos: Long,
    idleCalls: Long,
    idleWaitNanos: Long,
    answers: Long,
    callNanos: Long)

object CallQueueTotals {
  private[executor] final class Adders {
    private val readCalls, readWait, idleCalls, idleWait, answers, callNanos = new LongAdder

    def started(idlePoll: Boolean, waitedNanos: Long): Unit =
      if (idlePoll) { idleCalls.increment(); idleWait.add(waitedNanos) }
      else { readCalls.increment(); readWait.add(waitedNanos) }

    def answered(tookNanos: Long): Unit = { answers.increment(); callNanos.add(tookNanos) }

    def snapshot(): CallQueueTotals =
      CallQueueTotals(readCalls.sum(), readWait.sum(), idleCalls.sum(), idleWait.sum(), answers.sum(), callNanos.sum())
  }
}
