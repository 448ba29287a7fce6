package io.github.sparkkinesis.sink

import java.util

/**
 * The queue of one send lane and the choice of what its next PutRecords request carries: records from the head,
 * in order, within the record and byte caps. With `distinctKeys` (preserveKeyOrder) a request takes at most one
 * record per partition key and leaves later records of a key queued behind the earlier one, in order, so a
 * record that comes back failed is resent before anything later of its key is sent at all.
 */
final class RecordBatcher(distinctKeys: Boolean) {
  private val queue = new util.ArrayDeque[PendingRecord]()

  def isEmpty: Boolean = queue.isEmpty
  def size: Int = queue.size

  def add(record: PendingRecord): Unit = queue.addLast(record)

  /** Puts records that came back failed in front of everything queued, keeping their order. */
  def requeueFirst(failed: util.List[PendingRecord]): Unit = {
    var i = failed.size - 1
    while (i >= 0) {
      queue.addFirst(failed.get(i))
      i -= 1
    }
  }

  /**
   * Takes the next request's records. The first record always goes (the writer refuses records larger than a
   * request), so a lane with records never yields an empty request.
   */
  def take(maxRecords: Int, maxBytes: Long): util.ArrayList[PendingRecord] = {
    val batch = new util.ArrayList[PendingRecord](math.min(maxRecords, queue.size))
    var bytes = 0L
    if (!distinctKeys) {
      while (!queue.isEmpty && batch.size < maxRecords && (batch.isEmpty || bytes + queue.peekFirst.size <= maxBytes)) {
        val r = queue.pollFirst()
        bytes += r.size
        batch.add(r)
      }
    } else {
      // Bounded scan: a hot key must not make every request walk its whole backlog.
      val keys = new util.HashSet[String]()
      val skipped = new util.ArrayList[PendingRecord]()
      var scanned = 0
      val scanLimit = maxRecords * 4
      var full = false
      while (!queue.isEmpty && !full && scanned < scanLimit) {
        val r = queue.pollFirst()
        scanned += 1
        if (keys.contains(r.partitionKey)) skipped.add(r)
        else if (batch.isEmpty || bytes + r.size <= maxBytes) {
          keys.add(r.partitionKey)
          bytes += r.size
          batch.add(r)
          full = batch.size >= maxRecords
        } else {
          // Full by bytes: everything from here stays, in order.
          queue.addFirst(r)
          full = true
        }
      }
      var i = skipped.size - 1
      while (i >= 0) { queue.addFirst(skipped.get(i)); i -= 1 }
    }
    batch
  }
}
