package io.github.sparkkinesis.source
package executor

import java.util.ArrayDeque

/**
 * Feeds whose pacing allows a polled call, waiting for a call slot: first come first served, except that the
 * idle budget's polls (after several empty answers at the shard's tip) queue apart and, while others wait too,
 * take one start in `idleShare`. A call to a shard with records brings them; an idle poll mostly finds none. When calls take longer
 * than usual (a busy endpoint, a loaded executor), one queue let the idle polls' bursts take most slots: 10,000
 * shards, 1,000 of them with a record a second, calls answered in 50 ms: 406 of 593 calls a second were idle
 * polls, a busy shard's call came every few seconds and p50 put -> row was 3 s. Idle polls keep their share, so a
 * shard that wakes is still found, and neither queue starves. Not thread-safe: the [[Prefetcher]]'s scheduler
 * thread owns it.
 */
final class ReadyQueue[A](idleShare: Int) {
  private val reads = new ArrayDeque[A]()
  private val idle = new ArrayDeque[A]()
  /** Reads started while idle polls waited, since the last idle poll started. */
  private var readsPastIdle = 0

  /** Joins the end of its queue, or (`first`: it waited already, e.g. for buffer space) the front. */
  def add(a: A, idlePoll: Boolean, first: Boolean = false): Unit = {
    val q = if (idlePoll) idle else reads
    if (first) q.addFirst(a) else q.addLast(a)
  }

  def isEmpty: Boolean = reads.isEmpty && idle.isEmpty
  def size: Int = reads.size() + idle.size()
  def idleSize: Int = idle.size()

  /** The next to start; null when none waits. */
  def poll(): A = {
    beforePoll = readsPastIdle
    if (idle.isEmpty) reads.pollFirst()
    else if (reads.isEmpty || readsPastIdle >= idleShare - 1) { readsPastIdle = 0; idle.pollFirst() }
    else { readsPastIdle += 1; reads.pollFirst() }
  }

  /** `a`, the last one [[poll]] gave, could not start after all: it is next again, as if never polled. */
  def putBack(a: A, idlePoll: Boolean): Unit = {
    add(a, idlePoll, first = true)
    readsPastIdle = beforePoll
  }
  private var beforePoll = 0
}
