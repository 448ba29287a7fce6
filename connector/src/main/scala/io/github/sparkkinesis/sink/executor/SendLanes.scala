package io.github.sparkkinesis.sink
package executor

import java.util

/**
 * A writer's queued records and the choice of its next request. Pure (explicit time, no I/O), so the closed-loop
 * flow-control model runs the writer's own scheduling.
 *
 * Records are spread over `count` lanes by partition key. A lane has at most one request in flight and gets its
 * failed records back at its head, so requests never overtake each other within a key. While nothing is paced a
 * request comes from one lane, so up to `count` are in flight and each carries what its lane gathered meanwhile.
 * While the [[SendPacer]] paces some shard, a request gathers from every lane that may send (a shard's turn then
 * carries its whole allotment, not the fragment one lane holds), and each lane it drew from stays busy until its
 * response.
 */
final class SendLanes(count: Int, preserveKeyOrder: Boolean, maxBytes: Long, pacer: SendPacer, startNanos: Long) {
  private final class Lane {
    val batcher = new RecordBatcher(preserveKeyOrder)
    var busy = false
    var notBeforeNanos: Long = startNanos
    // Nothing queued here may go before `wakeAtNanos`; a record that arrives may bring it forward.
    var waiting = false
    var wakeAtNanos = 0L
  }

  private val lanes = Array.fill(count)(new Lane)
  private val ready = new Array[Int](count)
  private var first = 0
  private var queuedRecordCount = 0
  private var queuedByteCount = 0L

  /** Records (and their bytes) queued and not in flight. */
  def queuedRecords: Int = queuedRecordCount
  def queuedBytes: Long = queuedByteCount

  def add(record: PendingRecord, now: Long): Unit = {
    val lane = lanes(laneOf(record))
    lane.batcher.add(record)
    if (lane.waiting) {
      val at = pacer.wakeFor(record, now)
      if (at - lane.wakeAtNanos < 0) lane.wakeAtNanos = at
    }
    queuedRecordCount += 1
    queuedByteCount += record.size
  }

  /**
   * The next request that may leave now, or null. Call again until null: while nothing is paced each call serves
   * one more lane.
   */
  def next(now: Long): Outgoing = {
    // Called after every record added: no allocation until some lane may send.
    var found = 0
    var i = 0
    while (i < count) {
      // Rotating the first lane keeps the pace from always favouring lane 0.
      val index = (first + i) % count
      val lane = lanes(index)
      if (!lane.busy && !lane.batcher.isEmpty && now - lane.notBeforeNanos >= 0 &&
        (!lane.waiting || now - lane.wakeAtNanos >= 0)) {
        ready(found) = index
        found += 1
      }
      i += 1
    }
    if (found == 0) return null
    first = (first + 1) % count
    val used = if (pacer.gated) found else 1
    val sources = new Array[RecordBatcher](used)
    var j = 0
    while (j < used) { sources(j) = lanes(ready(j)).batcher; j += 1 }
    val out = pacer.take(sources, maxBytes, now)
    if (out == null) {
      var k = 0
      while (k < used) {
        val lane = lanes(ready(k))
        lane.waiting = true
        lane.wakeAtNanos = pacer.wakeAtNanos
        k += 1
      }
      return null
    }
    val drew = new util.ArrayList[Integer](used)
    var k = 0
    while (k < used) {
      if (out.drawn(k)) {
        val lane = lanes(ready(k))
        lane.busy = true
        lane.waiting = false
        drew.add(ready(k))
      }
      k += 1
    }
    out.lanes = drew.stream().mapToInt(_.intValue).toArray
    queuedRecordCount -= out.records.size
    var r = 0
    while (r < out.records.size) { queuedByteCount -= out.records.get(r).size; r += 1 }
    out
  }

  /** The request's response came (or it failed): its lanes may send again. */
  def completed(out: Outgoing): Unit = out.lanes.foreach(lanes(_).busy = false)

  /**
   * Records a response did not store go back to the head of their lanes, in request order, not to be sent before
   * `notBeforeNanos`.
   */
  def resend(failed: util.List[PendingRecord], notBeforeNanos: Long): Unit = {
    val byLane = new Array[util.ArrayList[PendingRecord]](count)
    var i = 0
    while (i < failed.size) {
      val r = failed.get(i)
      val l = laneOf(r)
      if (byLane(l) == null) byLane(l) = new util.ArrayList[PendingRecord]()
      byLane(l).add(r)
      queuedRecordCount += 1
      queuedByteCount += r.size
      i += 1
    }
    var l = 0
    while (l < count) {
      if (byLane(l) != null) {
        val lane = lanes(l)
        lane.batcher.requeueFirst(byLane(l))
        lane.waiting = false
        lane.notBeforeNanos = notBeforeNanos
      }
      l += 1
    }
  }

  /**
   * How long until some idle lane may send (0 when one may now), or -1 when every lane with records is busy: the
   * writer then waits for a response.
   */
  def waitNanos(now: Long): Long = {
    var wakeAt = 0L
    var any = false
    for (lane <- lanes if !lane.busy && !lane.batcher.isEmpty) {
      val at = if (lane.waiting && lane.wakeAtNanos - lane.notBeforeNanos > 0) lane.wakeAtNanos else lane.notBeforeNanos
      if (!any || at - wakeAt < 0) wakeAt = at
      any = true
    }
    if (any) math.max(0L, wakeAt - now) else -1L
  }

  private def laneOf(r: PendingRecord): Int = (r.partitionKey.hashCode & Int.MaxValue) % count
}
