package io.github.sparkkinesis.simulator

import scala.collection.mutable

/**
 * One shard's records in arrival order: appends and trims at the head are O(1), positioning by sequence number or
 * by timestamp is a binary search (counters and arrival times only grow within a shard).
 */
final class RecordLog {
  private val records = mutable.ArrayDeque.empty[StoredRecord]

  def size: Int = records.size
  def isEmpty: Boolean = records.isEmpty
  def apply(i: Int): StoredRecord = records(i)
  def last: StoredRecord = records.last
  def lastArrivalMillis: Long = if (records.isEmpty) Long.MinValue else records.last.arrivalMillis

  def append(record: StoredRecord): Unit = records.append(record)

  /** Drops records that arrived before `cutoffMillis`. */
  def trimBefore(cutoffMillis: Long): Unit =
    while (records.nonEmpty && records.head.arrivalMillis < cutoffMillis) records.removeHead()

  /** Index of the first record whose counter is at least `counter` (size when none). */
  def indexAtCounter(counter: Long): Int = lowerBound(_.counter < counter)

  /** Index of the first record that arrived at or after `millis` (size when none). */
  def indexAtTime(millis: Long): Int = lowerBound(_.arrivalMillis < millis)

  private def lowerBound(before: StoredRecord => Boolean): Int = {
    var lo = 0
    var hi = records.size
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (before(records(mid))) lo = mid + 1 else hi = mid
    }
    lo
  }
}
