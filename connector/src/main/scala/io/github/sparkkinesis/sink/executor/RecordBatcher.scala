package io.github.sparkkinesis.sink
package executor

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
   * Takes the next request's records. Without a gate the first record always goes (the writer refuses records
   * larger than a request), so a lane with records never yields an empty request.
   *
   * With a gate (flow control pacing some shards), each record is offered to it in queue order; a record it
   * refuses stays queued, and so does every later record of its key, so no record overtakes an earlier one of its
   * key. The request may then be empty.
   *
   * @param firstAlwaysGoes false when this lane's records join a request that already holds others: then the
   *                        byte cap binds from the first record
   */
  def take(
      maxRecords: Int,
      maxBytes: Long,
      gate: RecordGate = null,
      firstAlwaysGoes: Boolean = true): util.ArrayList[PendingRecord] = {
    val batch = new util.ArrayList[PendingRecord](math.min(maxRecords, queue.size))
    var bytes = 0L
    if (!distinctKeys && gate == null) {
      while (!queue.isEmpty && batch.size < maxRecords && (batch.isEmpty || bytes + queue.peekFirst.size <= maxBytes)) {
        val r = queue.pollFirst()
        bytes += r.size
        batch.add(r)
      }
    } else {
      // Keys whose later records must stay queued: taken once already (distinctKeys), or held back by the gate.
      val blocked = new util.HashSet[String]()
      val skipped = new util.ArrayList[PendingRecord]()
      var scanned = 0
      // Bounded scan: a hot key must not make every request walk its whole backlog. A gate may need to look past
      // a paced shard's records to reach the others, and the lane's queue is bounded, so it may walk it all.
      val scanLimit = if (gate == null) maxRecords * 4 else Int.MaxValue
      var full = false
      while (!queue.isEmpty && !full && scanned < scanLimit) {
        val r = queue.pollFirst()
        scanned += 1
        if (blocked.contains(r.partitionKey)) skipped.add(r)
        else if ((!batch.isEmpty || !firstAlwaysGoes) && bytes + r.size > maxBytes) {
          // Full by bytes: everything from here stays, in order.
          queue.addFirst(r)
          full = true
        } else {
          val verdict = if (gate == null) RecordGate.Admit else gate.admit(r)
          if (verdict == RecordGate.Admit) {
            if (distinctKeys) blocked.add(r.partitionKey)
            bytes += r.size
            batch.add(r)
            full = batch.size >= maxRecords
          } else if (verdict == RecordGate.Skip) {
            blocked.add(r.partitionKey)
            skipped.add(r)
          } else {
            queue.addFirst(r)
            full = true
          }
        }
      }
      var i = skipped.size - 1
      while (i >= 0) { queue.addFirst(skipped.get(i)); i -= 1 }
    }
    batch
  }
}

/** Says, record by record, what a paced request may carry; see [[SendPacer]]. */
trait RecordGate {
  /** [[RecordGate.Admit]], [[RecordGate.Skip]] (this record stays, later ones may go) or [[RecordGate.Stop]]. */
  def admit(record: PendingRecord): Int
}

object RecordGate {
  val Admit = 0
  val Skip = 1
  val Stop = 2
}
