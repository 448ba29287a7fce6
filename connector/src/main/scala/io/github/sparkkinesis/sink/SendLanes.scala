package io.github.sparkkinesis.sink

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
    // Nothing queued here may go before `wakeAtNanos`, unless a record arrives whose shard's turn has come.
    var waiting = false
    var wakeAtNanos = 0L
  }

  private val lanes = Array.fill(count)(new Lane)
  private var first = 0
  private var queuedRecordCount = 0
  private var queuedByteCount = 0L

  /** Records (and their bytes) queued and not in flight. */
  def queuedRecords: Int = queuedRecordCount
  def queuedBytes: Long = queuedByteCount

  def add(record: PendingRecord, now: Long): Unit = {
    val lane = lanes(laneOf(record))
    lane.batcher.add(record)
    if (lane.waiting && pacer.mayGoNow(record, now)) lane.waiting = false
    queuedRecordCount += 1
    queuedByteCount += record.size
  }

  /**
   * The next request that may leave now, or null. Call again until null: while nothing is paced each call serves
   * one more lane.
   */
  def next(now: Long): Outgoing = {
    val ready = new util.ArrayList[Lane](count)
    var i = 0
    while (i < count) {
      // Rotating the first lane keeps the pace from always favouring lane 0.
      val lane = lanes((first + i) % count)
      if (!lane.busy && !lane.batcher.isEmpty && now - lane.notBeforeNanos >= 0 &&
          (!lane.waiting || now - lane.wakeAtNanos >= 0)) ready.add(lane)
      i += 1
    }
    if (ready.isEmpty) return null
    first = (first + 1) % count
    val sources = if (pacer.gated) Array.tabulate(ready.size)(ready.get(_).batcher) else Array(ready.get(0).batcher)
    val out = pacer.take(sources, maxBytes, now)
    if (out == null) {
      ready.forEach { lane => lane.waiting = true; lane.wakeAtNanos = pacer.wakeAtNanos }
      return null
    }
    var j = 0
    while (j < sources.length) {
      if (out.drawn(j)) {
        val lane = ready.get(j)
        lane.busy = true
        lane.waiting = false
      }
      j += 1
    }
    queuedRecordCount -= out.records.size
    var k = 0
    while (k < out.records.size) { queuedByteCount -= out.records.get(k).size; k += 1 }
    out.lanes = (0 until sources.length).filter(out.drawn(_)).map(x => lanes.indexOf(ready.get(x))).toArray
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
