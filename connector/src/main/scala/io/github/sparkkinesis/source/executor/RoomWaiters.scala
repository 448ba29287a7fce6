package io.github.sparkkinesis.source
package executor

import java.util.ArrayDeque

/**
 * Feeds waiting for buffer space, oldest first, in two lines: those a call of any size suits (pushed reads, whose
 * asks stay outstanding), and shards behind their tip that wait for room for a useful answer
 * ([[ShardFeed.minCallBytes]]), so these hold back none of the others. When space is freed, [[release]] lets go
 * as many as can start now, the longest waiting first, and looks at a bounded number of feeds whatever the line's
 * length: a catch-up over thousands of shards can put most of them here, and letting every one that fits go on
 * each answer (most only to come back at the next call, which took the room again) kept the scheduler thread busy.
 * Not thread-safe: the [[Prefetcher]]'s scheduler thread owns it.
 */
final class RoomWaiters[A] {
  private val anySize = new ArrayDeque[A]()
  private val useful = new ArrayDeque[A]()

  /** Joins the end of its line: `anySize` when any room at all lets its call go. */
  def add(a: A, anySize: Boolean): Unit = (if (anySize) this.anySize else useful).addLast(a)

  def isEmpty: Boolean = anySize.isEmpty && useful.isEmpty
  def size: Int = anySize.size() + useful.size()

  /**
   * The feeds that `fits` now, oldest first of each line: at most `slots` of those that `takesSlot` (a pushed
   * feed's call takes none). In each line at most [[RoomWaiters.PassedOverMax]] feeds that do not fit, or find no
   * slot, are passed over: the feeds of one query need the same room, so past a few misfits the rest do not fit.
   */
  def release(slots: Int, takesSlot: A => Boolean, fits: A => Boolean): Seq[A] = {
    val out = Vector.newBuilder[A]
    var left = slots
    for (line <- Seq(anySize, useful)) {
      var passed = 0
      val it = line.iterator()
      while (it.hasNext && passed < RoomWaiters.PassedOverMax) {
        val a = it.next()
        val slot = takesSlot(a)
        if ((slot && left <= 0) || !fits(a)) passed += 1
        else {
          it.remove()
          out += a
          if (slot) left -= 1
        }
      }
    }
    out.result()
  }
}

object RoomWaiters {
  /** Feeds passed over per line and release: several queries' buffers may differ, so one misfit ends no look. */
  val PassedOverMax = 16
}
