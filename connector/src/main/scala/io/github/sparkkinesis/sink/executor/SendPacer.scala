package io.github.sparkkinesis.sink
package executor

import java.util
import java.util.concurrent.atomic.AtomicInteger

import software.amazon.awssdk.services.kinesis.model.PutRecordsResultEntry

/**
 * One writer's flow control over one stream: which queued records a request may carry now, and what each
 * response teaches. Pure logic with explicit time, so it runs in virtual time in tests.
 *
 * With `flowControl=adaptive` and the stream's shards known (a [[ShardMap]]), every shard has its own
 * [[FlowController]]: a hot shard's throttling paces that shard's records only, while records for shards with room
 * go on unpaced (the seed design's one pace per writer slowed every shard to the hot one's share). A request then
 * mixes the shards that may send now, each up to its own allotment, and records for a shard that must wait stay
 * queued, with every later record of their key. While pacing, a request gathers from every lane that may send, so
 * a shard's turn carries its whole allotment rather than the fragment one lane holds. Without a shard map
 * (ListShards not allowed), and for the `ladder`, `aimd` and `off` modes, the stream is paced as a whole: one
 * controller, as the seed design did.
 *
 * While nothing is paced, requests are taken from the head of the queue without computing any record's shard:
 * until the first throttling, flow control costs a map lookup per stored record. While some shards are paced, a
 * lane holding only a few records of unpaced shards lets them gather for up to [[SendPacer.LingerNanos]] (or
 * until a paced shard's turn) rather than send a request per trickle of input.
 *
 * Shard paces come from `paces`: the writer tasks of one JVM share them (see [[ShardPaces]]), so a shard's turns
 * go to whichever task has records for it.
 *
 * @param shards the stream's shard map; `stale = true` asks for a fresh listing after a record was stored in a
 *               shard the map does not know (a reshard); None paces the stream as a whole
 * @param paces  the shards' paces, shared with the JVM's other writers to the stream; this writer's own by default
 */
final class SendPacer(
    mode: FlowControlMode,
    maxRecords: Int,
    openShards: Int,
    shards: Boolean => Option[ShardMap],
    startNanos: Long,
    paces: ShardPaces = null) {
  import SendPacer._

  // Per-shard pacing is what `adaptive` means; the other modes are the seed design and its comparisons.
  private var map: ShardMap = if (mode == FlowControlMode.Adaptive) shards(false).orNull else null
  private val whole: PaceGroup =
    if (map == null)
      new PaceGroup(
        WholeStream,
        new ShardPace(FlowController(mode, maxRecords, openShards), startNanos, new AtomicInteger))
    else null
  private val book: ShardPaces =
    if (whole != null) null
    else if (paces != null) paces
    else new ShardPaces(() => FlowController(mode, maxRecords, 1))
  private val byId = new util.HashMap[String, PaceGroup]()
  private var byIndex: Array[PaceGroup] = Array.empty
  if (map != null) install(map)
  private var lastRelistNanos = startNanos

  private var stamp = 0L
  // Who this writer is to the shared paces: not the pacer itself, which a pace would then keep alive.
  private val token = new Object
  private val touched = new util.ArrayList[PaceGroup]()
  private var wakeAt = 0L
  private var wakeKnown = false
  private var gateNow = 0L

  private var pacedTaken = 0
  // While pacing, when a request of a few unpaced records may leave after all; 0 when none is gathering.
  private var lingerUntilNanos = 0L
  private val lingerBatch = math.max(1, maxRecords / 5)

  private val gate = new RecordGate {
    override def admit(r: PendingRecord): Int = {
      val g = groupOf(r)
      touch(g)
      val pace = g.pace
      if (!pace.pacing) { g.records += 1; g.units += FlowController.units(r.size); RecordGate.Admit }
      else {
        // A shard this request already takes records for has its turn; another asks once per request.
        val turn = if (g.records > 0) gateNow else pace.turnAt(token, gateNow)
        if (turn - gateNow > 0) {
          if (!wakeKnown || turn - wakeAt < 0) { wakeAt = turn; wakeKnown = true }
          refused
        } else {
          val units = FlowController.units(r.size)
          if (g.records >= pace.batchSize || (g.records > 0 && g.units + units > pace.batchUnits)) {
            g.full = true
            refused
          } else { g.records += 1; g.units += units; pacedTaken += 1; RecordGate.Admit }
        }
      }
    }
  }

  /** True when each shard has its own pace. */
  def perShard: Boolean = whole == null

  /** Groups pacing now (the stream's shards, for every writer sharing their paces; or the whole stream). */
  def pacedCount: Int = if (whole == null) book.pacedCount else if (whole.pace.pacing) 1 else 0

  /** True while some shard (or the stream) is paced: requests are then gathered across lanes, see [[SendLanes]]. */
  def gated: Boolean = pacedCount > 0

  /**
   * The next request, or null when none of the queued records may go yet: then [[wakeAtNanos]] says when the
   * first of them may. While nothing is paced it comes from `sources(0)` alone; while pacing, from every source in
   * turn (the lanes that may send), each shard up to its allotment for the whole request. A shard counts as
   * having had more to send (so a clean response may raise its pace) only when its allotment held records back:
   * a shard whose records all go at once is limited by its input, and raising its pace would only store up a
   * burst.
   */
  def take(sources: Array[RecordBatcher], maxBytes: Long, now: Long): Outgoing =
    if (!gated) {
      val size = if (whole != null) whole.pace.batchSize else maxRecords
      val batcher = sources(0)
      val batch = batcher.take(size, maxBytes)
      val drawn = new Array[Boolean](sources.length)
      drawn(0) = !batch.isEmpty
      new Outgoing(batch, drawn, unitsOf(batch), now, size, 0L, batch.size == size || !batcher.isEmpty, null)
    } else {
      newStamp()
      wakeKnown = false
      gateNow = now
      pacedTaken = 0
      val batch = new util.ArrayList[PendingRecord]()
      val parts = new Array[util.ArrayList[PendingRecord]](sources.length)
      var bytes = 0L
      var i = 0
      while (i < sources.length && batch.size < maxRecords && bytes < maxBytes) {
        val part = sources(i).take(maxRecords - batch.size, maxBytes - bytes, gate, firstAlwaysGoes = batch.isEmpty)
        parts(i) = part
        var j = 0
        while (j < part.size) { bytes += part.get(j).size; j += 1 }
        batch.addAll(part)
        i += 1
      }
      if (batch.isEmpty) {
        if (!wakeKnown) wakeAt = now + RescanNanos
        null
      } else if (pacedTaken == 0 && batch.size < lingerBatch && lingering(now)) {
        // Only a few records of unpaced shards: while the writer is paced its input comes in trickles, and a
        // request per trickle would cost more round trips than the records are worth. Let them gather a moment.
        var k = 0
        while (k < parts.length) { if (parts(k) != null) sources(k).requeueFirst(parts(k)); k += 1 }
        wakeAt = if (wakeKnown && wakeAt - lingerUntilNanos < 0) wakeAt else lingerUntilNanos
        null
      } else {
        lingerUntilNanos = 0L
        schedule(batch, parts.map(p => p != null && !p.isEmpty), now)
      }
    }

  /** When a [[take]] that returned null may be tried again. */
  def wakeAtNanos: Long = wakeAt

  /**
   * A record joined a lane that is waiting for its shards' turns: by when the lane must look again for it. A paced
   * shard's record waits for that shard's turn; a record of an unpaced shard at most [[LingerNanos]] (gathering
   * company meanwhile), however slow the paced shards it queues behind.
   */
  def wakeFor(r: PendingRecord, now: Long): Long = {
    val g = groupOf(r)
    if (g.pace.pacing) g.pace.nextAtNanos else if (whole != null) now else now + LingerNanos
  }

  /** True when every one of these (failed) records' shards is paced: resends then wait for the pace alone. */
  def pacing(records: util.List[PendingRecord]): Boolean = {
    var all = true
    var i = 0
    while (all && i < records.size) { all = groupOf(records.get(i)).pace.pacing; i += 1 }
    all
  }

  /** One response came back: each shard's controller hears about its own records. */
  def onResponse(out: Outgoing, results: util.List[PutRecordsResultEntry], now: Long): Unit = {
    val records = out.records
    if (whole != null) {
      var throttled = 0
      var i = 0
      while (i < records.size) { if (throttledCode(results.get(i).errorCode())) throttled += 1; i += 1 }
      feed(whole, FlowController.Response(records.size, out.units, throttled, out.sentAtNanos, now, full(out, whole)))
    } else {
      newStamp()
      var i = 0
      while (i < records.size) {
        val r = records.get(i)
        val result = results.get(i)
        val code = result.errorCode()
        // A stored record names its shard; a refused one is placed by its hash key.
        val g = if (code == null && result.shardId() != null) stored(r, result.shardId(), now) else groupOf(r)
        touch(g)
        g.records += 1
        g.units += FlowController.units(r.size)
        if (throttledCode(code)) g.throttled += 1
        i += 1
      }
      var j = 0
      while (j < touched.size) {
        val g = touched.get(j)
        feed(g, FlowController.Response(g.records, g.units, g.throttled, out.sentAtNanos, now, full(out, g)))
        j += 1
      }
    }
  }

  /** For the WARN line about resends: what is paced now and at what rate. */
  def summary: String = {
    val (count, rate) = pacedRate
    val of = if (whole != null) "the stream as a whole" else s"$count of ${byIndex.length} shard(s)"
    if (count == 0) "not pacing" else rate.fold(s"pacing $of")(r => f"pacing $of at $r%.0f write units/s in all")
  }

  /** For the trace line: `paced=<groups paced>/<groups> rate=<summed rate>`. */
  def traceFields: String = {
    val (count, rate) = pacedRate
    s"paced=$count/${if (whole != null) 1 else byIndex.length}" + rate.fold("")(r => f" rate=$r%.1f")
  }

  private def pacedRate: (Int, Option[Double]) = {
    val groups = if (whole != null) Seq(whole) else byIndex.toSeq
    val pacing = groups.filter(_.pace.pacing)
    val rates = pacing.flatMap(_.pace.unitsPerSecond)
    (pacing.size, if (rates.isEmpty) None else Some(rates.sum))
  }

  private def schedule(batch: util.ArrayList[PendingRecord], drawn: Array[Boolean], now: Long): Outgoing = {
    val requestFull = batch.size >= maxRecords
    var maxPause = 0L
    var allowed = 0
    var fullGroups: util.HashSet[PaceGroup] = null
    var j = 0
    while (j < touched.size) {
      val g = touched.get(j)
      if (g.records > 0) {
        if (g.pace.pacing) {
          maxPause = math.max(maxPause, g.pace.schedule(token, g.units, now))
          allowed += g.pace.batchSize
        } else allowed += g.records
        if (g.full) {
          if (fullGroups == null) fullGroups = new util.HashSet[PaceGroup]()
          fullGroups.add(g)
        }
      }
      j += 1
    }
    new Outgoing(batch, drawn, unitsOf(batch), now, math.min(maxRecords, allowed), maxPause, requestFull, fullGroups)
  }

  /** The request was as large as this group was allowed: its writer had more for it. */
  private def full(out: Outgoing, g: PaceGroup): Boolean =
    out.fullBatch || (out.fullGroups != null && out.fullGroups.contains(g))

  /** True while a few unpaced records should wait for more: starts the wait on first sight. */
  private def lingering(now: Long): Boolean = {
    if (lingerUntilNanos == 0L) lingerUntilNanos = now + LingerNanos
    now - lingerUntilNanos < 0
  }

  private def refused: Int = if (whole != null) RecordGate.Stop else RecordGate.Skip

  private def feed(g: PaceGroup, response: FlowController.Response): Unit = g.pace.onResponse(response)

  private def groupOf(r: PendingRecord): PaceGroup =
    if (whole != null) whole
    else {
      val cached = r.group
      if (cached != null && !cached.retired) cached
      else {
        val g = byIndex(map.shardOf(r.entry))
        r.group = g
        g
      }
    }

  /** The group of a shard a record was stored in; a shard the map does not know means the stream was resharded. */
  private def stored(r: PendingRecord, shardId: String, now: Long): PaceGroup = {
    var g = byId.get(shardId)
    if (g == null || g.retired) {
      relist(now)
      g = byId.get(shardId)
      if (g == null) { g = newGroup(shardId, now); byId.put(shardId, g) }
    }
    r.group = g
    g
  }

  private def relist(now: Long): Unit =
    if (now - lastRelistNanos >= RelistNanos) {
      lastRelistNanos = now
      shards(true).foreach(m => if (m ne map) install(m))
    }

  private def install(m: ShardMap): Unit = {
    map = m
    byId.values.forEach(_.retired = true)
    byIndex = m.shardIds.map { id =>
      var g = byId.get(id)
      if (g == null) { g = newGroup(id, startNanos); byId.put(id, g) }
      g.retired = false
      g
    }
  }

  private def newGroup(shardId: String, now: Long): PaceGroup = new PaceGroup(shardId, book(shardId, now))

  private def newStamp(): Unit = { stamp += 1; touched.clear() }

  private def touch(g: PaceGroup): Unit = if (g.stamp != stamp) {
    g.stamp = stamp
    g.records = 0
    g.units = 0
    g.throttled = 0
    g.full = false
    touched.add(g)
  }
}

object SendPacer {
  private val WholeStream = "*"
  /** A reshard is looked for at most this often per writer (and [[ShardMap]] lists at most every 5 s per JVM). */
  private val RelistNanos = 5L * 1000 * 1000 * 1000
  private val RescanNanos = 1000L * 1000
  /** How long records of unpaced shards may wait for company while other shards are paced: a paced shard's turn. */
  val LingerNanos: Long = 100L * 1000 * 1000

  private def throttledCode(code: String): Boolean = code != null && PutRecordsOutcome.ThrottlingCodes.contains(code)

  private def unitsOf(batch: util.ArrayList[PendingRecord]): Double = {
    var units = 0.0
    var i = 0
    while (i < batch.size) { units += FlowController.units(batch.get(i).size); i += 1 }
    units
  }
}

/**
 * One shard as this writer sees it, or the whole stream where shards are not told apart: its pace (shared with
 * the JVM's other writers to the shard) and this writer's scratch. Only the writer's thread uses the scratch.
 */
final class PaceGroup(val shardId: String, val pace: ShardPace) {
  /** No longer an open shard of the current map: records cached here are placed again. */
  private[sink] var retired = false
  // Scratch for one take or one response, reset when `stamp` changes.
  private[sink] var stamp = -1L
  private[sink] var records = 0
  private[sink] var units = 0.0
  private[sink] var throttled = 0
  private[sink] var full = false
}

/**
 * A request as it left, for its response: what the controllers need to hear back.
 *
 * @param drawn        which of the sources given to [[SendPacer.take]] it drew records from
 * @param allowedBatch records flow control allowed in it (the sink's `batchSize` metric)
 * @param pauseNanos   the longest pace this request set for any of its shards (the `flowControlDelayMs` metric)
 * @param fullBatch    the request was as large as it could be: the writer had more to send
 * @param fullGroups   shards whose allotment the request used up (null when none)
 */
final class Outgoing(
    val records: util.ArrayList[PendingRecord],
    val drawn: Array[Boolean],
    val units: Double,
    val sentAtNanos: Long,
    val allowedBatch: Int,
    val pauseNanos: Long,
    val fullBatch: Boolean,
    val fullGroups: util.Set[PaceGroup]) {
  /** The writer's lanes it drew from, set by [[SendLanes]]. */
  private[sink] var lanes: Array[Int] = Array.empty
}
