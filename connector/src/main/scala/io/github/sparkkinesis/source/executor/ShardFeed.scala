package io.github.sparkkinesis.source
package executor

import java.util.ArrayDeque

import io.github.sparkkinesis.source.ShardPosition._

/** How far a feed is, as a snapshot task reports it for one shard. */
final case class FeedState(
    last: ShardPosition,
    records: Long,
    bytes: Long,
    millisBehindLatest: Option[Long],
    caughtUp: Boolean,
    bufferedBytes: Long)

/**
 * The records of a planned range that this executor holds: `records` in order, then, when the buffer does not
 * reach the range's end (a batch read whose buffer filled), the rest is read from Kinesis after `resumeFrom`.
 */
final case class BufferedPart(records: Seq[RecordBlock], resumeFrom: Option[ShardPosition])

/**
 * One shard read continuously on an executor: the records fetched after `base` (the start of the next batch to
 * plan), in order, with their accounted bytes. The [[Prefetcher]] drives its calls; snapshot and batch tasks read
 * it. Every mutable field is guarded by the feed's monitor.
 *
 * `spill` (batch reads): once the executor's buffer is full the feed keeps reading to find the range's end but
 * keeps no more records; the batch task reads the rest again from Kinesis. Streaming feeds pause instead.
 *
 * `runEnd` (`Trigger.AvailableNow`, batch reads): where the feed stops, see [[RunEnd]].
 *
 * A shard the listing shows closed ([[markClosed]]) is at its tip only once its end has been read: AWS need not
 * return a closed shard's last records and its end in one answer, and children wait for their parents' end.
 */
final class ShardFeed(
    val sourceId: String,
    val key: ShardKey,
    start: ShardPosition,
    val config: SourceConfig,
    val runEnd: Option[RunEnd],
    val spill: Boolean,
    val fetcher: ShardFetcher) {

  private var base: ShardPosition = start
  private val records = new ArrayDeque[RecordBlock]()
  private var heldBytes = 0L
  private var readTo: ShardPosition = start
  private var spilled = false
  private var polls = 0L
  private var millisBehind: Option[Long] = None
  private var atTip = false
  /** The feed reached its [[RunEnd]]: no more calls. */
  private var endReached = false
  private var closed = false
  private var failure: Option[Throwable] = None
  private var avgRecordBytes = ShardFeed.InitialRecordBytesGuess
  private var sized = false
  private var lastResponseBytes = 0L

  @volatile var stopped = false
  /** The call running for this feed, cancelled when the feed stops (it must not keep its slot, see [[Prefetcher]]). */
  @volatile private[source] var inFlight: java.util.concurrent.CompletableFuture[_] = null
  /** When the call in flight started (System.nanoTime), for [[Prefetcher.CallTimeout]]. */
  @volatile private[source] var inFlightSinceNanos = 0L
  @volatile private[source] var nextCallNanos: Long = System.nanoTime()
  @volatile private[source] var idlePolls = 0
  /** When the feed last joined the queue for a call slot ([[Prefetcher.callQueueTotals]]). */
  @volatile private[source] var readySinceNanos = 0L
  /** When the current run of empty answers at the tip began. */
  @volatile private[source] var idleSinceNanos = 0L
  /** When the feed's last call started (System.nanoTime), 0 before its first. */
  @volatile private[source] var lastCallNanos = 0L
  /** The wait the last answer with records at the tip set ([[ShardFeed.sparseWaitNanos]]); 0 behind the tip. */
  @volatile private[source] var sparseNanos = 0L
  /** When this shard's regular traffic brings its next record. */
  private[source] val cadence = new ShardCadence
  @volatile private var lastTouchNanos = System.nanoTime()

  /** A snapshot or a batch task used the feed: it is still wanted here. */
  def touch(): Unit = lastTouchNanos = System.nanoTime()

  /** Unused for longer than `afterNanos`: its query stopped, or its shard is read on another executor now. */
  def abandoned(now: Long, afterNanos: Long): Boolean = now - lastTouchNanos > afterNanos

  def ended: Boolean = synchronized(readTo == ShardEnd)
  def failed: Option[Throwable] = synchronized(failure)
  /** Answered at least once, or never will be. */
  def hasPolled: Boolean = is(ShardFeed.Polled)
  def caughtUp: Boolean = is(ShardFeed.CaughtUp)
  /** No call will ever be made again. */
  def finished: Boolean = is(ShardFeed.Finished)
  /** The listing shows the shard closed: an answer at its tip without its end is not the tip (see the class). */
  def markClosed(): Unit = synchronized { closed = true }
  def hasRecordsAfter(from: ShardPosition): Boolean = synchronized(readTo != from)

  /**
   * The five answers a snapshot task's wait looks at, under one lock ([[ShardFeed.Failed]] and the others): it
   * scans all of its feeds whenever a call changed something, at 10,000 shards several times a trigger.
   */
  def look(from: ShardPosition): Int = {
    val gone = stopped
    synchronized {
      val ended = readTo == ShardEnd
      var bits = 0
      if (failure.nonEmpty) bits |= ShardFeed.Failed
      if (readTo != from) bits |= ShardFeed.HasData
      if (polls > 0 || failure.nonEmpty || ended || gone) bits |= ShardFeed.Polled
      if (reached) bits |= ShardFeed.CaughtUp
      if (ended || endReached || failure.nonEmpty || gone) bits |= ShardFeed.Finished
      bits
    }
  }

  // One of look's answers that does not depend on a position (null: HasData, which does, is not asked for).
  private def is(bit: Int): Boolean = (look(null) & bit) != 0

  // The feed read up to the shard's end or its tip; the caller holds the lock.
  private def reached: Boolean = readTo == ShardEnd || endReached || atTip

  /**
   * Nothing held or read past `from`, at the tip: the shard as [[ShardSnapshot.quiet]] describes it, told without
   * building its state (most shards of a large stream, on most triggers).
   */
  def quietAt(from: ShardPosition): Boolean = synchronized {
    records.isEmpty && heldBytes == 0 && readTo == from && failure.isEmpty && millisBehind.contains(0L) && reached
  }
  def bytesHeld: Long = synchronized(heldBytes)
  def millisBehindLatest: Option[Long] = synchronized(millisBehind)

  /**
   * Real-time reads: the records held after `from`, when the feed starts there. A real-time task commits what it
   * emitted before it asks again ([[Prefetcher.feedFor]]), so all it is handed is new.
   */
  def heldAfter(from: ShardPosition): Seq[RecordBlock] = synchronized {
    if (from != base || records.isEmpty) Nil else records.toArray(new Array[RecordBlock](records.size())).toSeq
  }

  /**
   * The next call: records to ask for, and the bytes their answer may bring. An answer aims at `targetBytes`
   * (about a second of the shard's read quota), but a shard whose last answer was small (quiet, or read to its
   * tip) asks for about twice that answer, so a thousand idle shards do not hold the buffer's space for answers
   * that will not come, and a shard that wakes up doubles its asks call by call. A streaming feed asks for no
   * more than `freeBytes` can take once the answer is decoded ([[ShardFeed.AnswerHeapFactor]]), and with its first
   * call for no more than `firstShareBytes` (its part of the room answers may take: `Prefetcher.firstCallShare`).
   */
  def nextCall(freeBytes: Long, targetBytes: Long, firstShareBytes: Long = Long.MaxValue): CallPlan = synchronized {
    val target = math.min(ShardFeed.MaxResponseBytes, targetBytes)
    val floor =
      if (fetcher != null && fetcher.pushed) ShardFeed.MinPushedReservationBytes else ShardFeed.MinReservationBytes
    val wanted = if (polls == 0) math.min(target, math.max(1L, firstShareBytes))
    else math.min(target, math.max(floor, 2 * lastResponseBytes))
    val bytes = if (spill) wanted else math.min(wanted, freeBytes / ShardFeed.AnswerHeapFactor)
    val limit = math.max(1L, math.min(config.maxRecordsPerFetch.toLong, bytes / avgRecordBytes)).toInt
    CallPlan(limit, math.min(ShardFeed.MaxResponseBytes, limit * avgRecordBytes))
  }

  /**
   * The room a call of a shard behind its tip waits for: a [[ShardFeed.MinCallShare]] of `targetBytes` (its quota's
   * second), or of `answerRoom` (what all calls in flight may bring) when that is smaller, so a small buffer can
   * always make one. A shard paced at five calls a second needs answers of a fifth of its quota, and every call
   * costs its thread about the same CPU (signing, HTTP) however little it brings: with a full buffer freed a little
   * at a time, calls of a few records each followed each other. None (0) for a shard at its tip or not yet read:
   * quiet shards and a query's first calls bring little and go as soon as any room is free, not behind catch-up
   * calls. Not from the last answers: small answers under a full buffer would shrink the next ones.
   */
  def minCallBytes(targetBytes: Long, answerRoom: Long): Long = synchronized {
    if (polls == 0 || atTip || failure.nonEmpty) 0L
    else math.min(math.min(ShardFeed.MaxResponseBytes, targetBytes), answerRoom) / ShardFeed.MinCallShare
  }

  /**
   * The next batch starts at `from`: records up to it were planned and their batch committed, so they are dropped.
   * Returns the bytes freed, or None when `from` is not a position this feed reached (the feed is then replaced by
   * one that starts there).
   */
  def commit(from: ShardPosition): Option[Long] = synchronized {
    val before = heldBytes
    val reached =
      if (from == base) true
      else if (failure.nonEmpty) false
      else if (from == readTo && !spilled) { records.clear(); heldBytes = 0; true }
      else from match {
        case a: After if records.stream().anyMatch(_.holds(a)) => dropThrough(a); true
        case _ => false
      }
    if (reached) { base = from; Some(before - heldBytes) }
    else None
  }

  /** Frees every record held; returns the bytes freed. */
  def release(): Long = synchronized { val freed = heldBytes; records.clear(); heldBytes = 0; freed }

  /** Drops the records up to `a` (the blocks before it whole, the one holding it in part). */
  private def dropThrough(a: After): Unit = {
    var done = false
    while (!done && !records.isEmpty) {
      val head = records.peekFirst()
      val n = head.countAtOrBefore(a)
      heldBytes -= head.heapBytes(0, n)
      records.pollFirst()
      if (n < head.size) { records.addFirst(head.drop(n).compact()); done = true }
    }
  }

  /**
   * What the next batch may plan from `base`: up to `maxRecords` / `maxBytes` (at least one record), ending at a
   * record this executor holds or, when all is taken, where the feed has read to.
   */
  def state(maxRecords: Long, maxBytes: Long): FeedState = synchronized {
    var n = 0L
    var bytes = 0L
    var lastTaken: ShardPosition = base
    val it = records.iterator()
    var capped = false
    while (it.hasNext && !capped) {
      val block = it.next()
      var i = 0
      while (i < block.size && !capped) {
        val size = block.recordBytes(i)
        if (n >= maxRecords || (n > 0 && bytes + size > maxBytes)) capped = true
        else { n += 1; bytes += size; i += 1 }
      }
      if (i > 0) lastTaken = block.position(i - 1)
    }
    val last = if (capped) lastTaken else readTo
    FeedState(last, n, bytes, millisBehind, caughtUp = !capped && (readTo == ShardEnd || endReached || atTip), heldBytes)
  }

  /** [[state]] from `from`, when this feed still starts there: a capped batch's share, cut after the snapshot. */
  def stateFrom(from: ShardPosition, maxRecords: Long, maxBytes: Long): Option[FeedState] = synchronized {
    if (from != base || failure.nonEmpty) None else Some(state(maxRecords, maxBytes))
  }

  /** Where the feed has read to: what this executor holds of the shard ends here (the source's latest offset). */
  def heldTo: ShardPosition = synchronized(readTo)

  /** The buffered records of (from, to], when this feed still starts at `from`. */
  def part(from: ShardPosition, to: ShardPosition): Option[BufferedPart] = synchronized {
    if (from != base || failure.nonEmpty) None
    else {
      val out = Seq.newBuilder[RecordBlock]
      var last: Option[After] = None
      val it = records.iterator()
      var beyond = false
      while (it.hasNext && !beyond) {
        val block = it.next()
        val n = block.countReaching(to)
        if (n > 0) { out += block.take(n); last = Some(block.position(n - 1)) }
        beyond = n < block.size
      }
      val complete = to match {
        // Held records past `to`: the range is all here, `to` a record or a position between two (endingPosition).
        case t: After => last.contains(t) || beyond
        case ShardEnd => readTo == ShardEnd && !spilled
        case _ => false
      }
      Some(BufferedPart(out.result(), if (complete) None else Some(last.getOrElse(base))))
    }
  }

  /** Takes a call's records: kept (or, spilled, only passed over). Returns the bytes newly held. */
  def onPoll(poll: Poll, mayHold: Long => Boolean): Long = synchronized {
    polls += 1
    lastResponseBytes = poll.bytes
    millisBehind = Some(poll.millisBehindLatest)
    val block = poll.records
    val n = block.size
    val arrivedAfter = runEnd.flatMap(_.arrivedAfterMillis)
    var admitted = 0
    while (admitted < n && arrivedAfter.forall(block.arrivalMillis(admitted) <= _)) admitted += 1
    var kept = if (spilled) 0 else admitted
    if (spill && !spilled) {
      kept = 0
      while (kept < admitted && mayHold(block.heapBytes(0, kept + 1))) kept += 1
    }
    if (kept < admitted) spilled = true
    val added = block.heapBytes(0, kept)
    if (kept > 0) records.addLast(block.take(kept).compact())
    heldBytes += added
    if (admitted > 0) readTo = block.position(admitted - 1)
    if (n > 0) {
      val observed = math.max(1L, poll.bytes / n)
      avgRecordBytes = if (sized) (avgRecordBytes + observed) / 2 else observed
      sized = true
    }
    if (admitted < n) endReached = true
    else if (poll.ended) readTo = ShardEnd
    atTip = admitted == n && (poll.ended || (poll.atTip && !closed))
    if (runEnd.isDefined && atTip) endReached = true
    idlePolls = if (n == 0 && atTip) idlePolls + 1 else 0
    if (idlePolls == 1) idleSinceNanos = System.nanoTime()
    added
  }

  def onFailure(e: Throwable): Unit = synchronized { failure = Some(e) }
}

/** One GetRecords call: at most `limit` records, about `answerBytes` of records expected back. */
final case class CallPlan(limit: Int, answerBytes: Long)

object ShardFeed {
  /** The bits of [[ShardFeed.look]]. */
  val Failed = 1
  val HasData = 2
  val Polled = 4
  val CaughtUp = 8
  val Finished = 16
  /** Until a shard's first records show their size: large, so a feed's first call cannot overfill a small buffer. */
  val InitialRecordBytesGuess: Long = 10L * 1024
  val MaxResponseBytes: Long = 10L * 1024 * 1024
  val MinReservationBytes: Long = 64L * 1024
  /**
   * A pushed read (enhanced fan-out) keeps its ask outstanding while its shard is quiet, so a thousand quiet shards
   * hold a thousand reservations at once: a quiet shard's is small (its events are: heartbeats, a trickle).
   */
  val MinPushedReservationBytes: Long = 8L * 1024
  /**
   * Heap an answer takes while it is decoded, per byte of its records: the SDK gathers the body in a growing
   * array, copies it once, then cuts it into records (measured with live heap histograms during a 10 KiB-record
   * drain: in-flight answers, not held records, filled most of the heap when calls reserved their records' bytes only).
   */
  val AnswerHeapFactor = 3L
  /** See [[ShardFeed.minCallBytes]]: a quarter lets a shard reach its read quota at four calls a second. */
  val MinCallShare = 4L

  /**
   * An idle shard is polled once a second (KCL 1.x's default; 2.x and later wait 1.5 s) while its JVM's budget
   * allows.
   */
  val IdlePollInterval: java.time.Duration = java.time.Duration.ofSeconds(1)
  /**
   * The calls a second one JVM spends on polling idle shards, all queries together. Idle polls are made in bursts
   * ([[BurstTick]]), where an empty GetRecords costs about 125 us of CPU against 250-350 us alone (measured at 1000
   * idle shards: 500 calls a second in bursts took 6.2 % of a core, 250 spread evenly 6.3 %, JIT included), so the
   * budget is about 6 % of a core. Up to 500 idle shards are polled once a second; more share the budget (a thousand:
   * every 2 s, a record waiting a second on average).
   */
  val IdleCallsPerSecond = 500

  /**
   * How long apart each of `idleFeeds` idle feeds must be polled to stay within the budget, in whole
   * [[BurstTick]]s: below [[IdlePollInterval]] (up to 500 feeds) it changes nothing, the idle ramp's second wins.
   */
  def idleBudgetNanos(idleFeeds: Int): Long = {
    val even = idleFeeds.toLong * 1000000000L / IdleCallsPerSecond
    // A whole number of ticks: a wait ends on the tick before it (burstAligned), so a wait between two ticks would
    // come a part of a tick sooner each time, over the budget.
    val tick = BurstTick.toNanos
    (even + tick - 1) / tick * tick
  }

  /**
   * How long after its last call an idle shard (`idlePolls` empty answers at its tip in a row) is polled again:
   * sooner after its first empty answers, then once a second (KCL 1.x's default) however long its silence, unless
   * its JVM's idle shards together would pass the budget ([[IdleCallsPerSecond]]): then as far apart as the budget
   * spreads them (`budgetNanos`, [[idleBudgetNanos]]). `maxIdle` caps the ramp; it caps the budget's spacing too
   * when `capsBudget` (the user set `maxIdlePollInterval`, or real-time mode), else the budget governs up to
   * [[IdleBudgetCeiling]]: past 5,000 idle shards in one JVM the default 10 s would otherwise make the calls, and
   * the CPU, grow with the shards (10,000: 1,000 calls a second). A few quiet shards answer the first record
   * after a silence within a second; thousands cost the budget, not a call a second each.
   */
  def idleWaitNanos(
      idlePolls: Int,
      minFetchPeriod: java.time.Duration,
      maxIdle: java.time.Duration,
      sparseNanos: Long = 0L,
      budgetNanos: Long = 0L,
      capsBudget: Boolean = true): Long =
    if (idlePolls == 0) 0L
    else {
      val doubling = math.min(IdlePollInterval.toNanos, minFetchPeriod.toNanos << math.min(idlePolls, 8))
      val ramp = math.min(maxIdle.toNanos, math.max(sparseNanos, doubling))
      val budget = if (idlePolls < BudgetAfterPolls) 0L else budgetNanos
      if (capsBudget) math.min(maxIdle.toNanos, math.max(ramp, budget))
      else math.max(ramp, math.min(budget, IdleBudgetCeiling.toNanos))
    }

  /**
   * Empty answers in a row before the budget spaces a shard's polls: a shard with sparse records (one a second,
   * a poll timed for each) finds nothing now and then, and spaced by the budget after one empty answer it waited
   * the budget's whole spacing with its next records (10,000 idle shards: 20 s; p95 put -> row 14.5 s on the
   * 1000 busy ones). Three empty answers are about two seconds of silence (400 ms, 800 ms, then a second).
   */
  val BudgetAfterPolls = 3

  /**
   * The longest the budget alone spaces an idle shard's polls (30,000 idle shards in one JVM; more exceed the
   * budget): well inside the 5 minutes a shard iterator lives, and a silence's first record waits at most this.
   */
  val IdleBudgetCeiling: java.time.Duration = java.time.Duration.ofSeconds(60)

  /**
   * How long after a call that found `records` (some) at its shard's tip the next one goes: about the time one of
   * them took to arrive (`sinceLastCallNanos`, from the call before, over `records`), at most
   * [[IdlePollInterval]] and `maxIdle`; pacing still comes on top. Empty answers after it wait no less
   * (`idleWaitNanos`' `sparseNanos`). Without it a shard with one record a second was polled 2 to 2.5 times a
   * second (200 ms after each record, then 400 and 800 ms), all but one call empty: at a thousand shards two
   * thousand calls a second, most of a 2-core machine. The first call of a feed, with no call before, sets none.
   */
  def sparseWaitNanos(records: Int, sinceLastCallNanos: Long, maxIdle: java.time.Duration): Long =
    if (records <= 0 || sinceLastCallNanos <= 0) 0L
    else math.min(math.min(IdlePollInterval.toNanos, maxIdle.toNanos), sinceLastCallNanos / records)

  /** Idle waits at least this long end on a [[BurstTick]]: a second, so the budget's waits gather too. */
  val BurstFrom: java.time.Duration = IdlePollInterval
  /**
   * The grid idle polls are gathered on. An empty GetRecords alone costs its thread 2 to 2.5 times the CPU of one
   * among others made back to back (measured with the SDK's sync client, 100 calls/s: 485 us a call spread evenly,
   * 281 us in tens, 220 us in 25s, 191 us in hundreds; the caches are cold after each wait). A quarter of a second:
   * a thousand idle shards make bursts of about 125 calls, and aligning brings a poll forward by less than a tick,
   * never later.
   */
  val BurstTick: java.time.Duration = java.time.Duration.ofMillis(250)

  /**
   * When to make a call planned for `nanos`, after an idle wait of `idleNanos`, that may not come before
   * `earliestNanos` (the shard's pacing): an idle wait of [[BurstFrom]] or more ends on the last [[BurstTick]]
   * (counted from `originNanos`) at or before `nanos`, so the silent shards due within a tick are polled together.
   * Only ever sooner, so a silence's first record still waits at most `maxIdlePollInterval`; never inside the
   * pacing (a `minFetchPeriod` longer than the idle wait keeps the planned time).
   */
  def burstAligned(nanos: Long, idleNanos: Long, earliestNanos: Long, originNanos: Long): Long =
    if (idleNanos < BurstFrom.toNanos) nanos
    else {
      val tick = BurstTick.toNanos
      val aligned = originNanos + Math.floorDiv(nanos - originNanos, tick) * tick
      if (aligned < earliestNanos) nanos else aligned
    }
}
