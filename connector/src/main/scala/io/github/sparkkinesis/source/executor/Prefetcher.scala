package io.github.sparkkinesis.source
package executor

import java.util.concurrent._
import java.util.concurrent.atomic.{AtomicLong, LongAdder}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.github.sparkkinesis.DaemonThreads
import io.github.sparkkinesis.client.{CallTally, KinesisClientFactory}
import org.apache.spark.internal.Logging

/**
 * The executor's read engine: every shard this executor owns is a [[ShardFeed]] read continuously in the
 * background, between triggers too, within the shard's quota (calls and bytes), into memory bounded by
 * `fetchBufferSize`. Calls run on fetch threads ([[PollingFetcher]]), at most [[callSlots]] at once per JVM, so the
 * cost of a trigger follows the data, not the shard count. When the buffer is full, streaming feeds
 * pause until a commit frees records (backpressure: nothing is dropped).
 *
 * A feed nobody asks for any more (its query stopped, its shards moved to another executor) is dropped after
 * [[AbandonedFloor]], or three times the longest gap between two uses of its query here if that is longer (slow
 * batches), so a long batch does not cost its read-ahead. A stopping query also asks its executors to drop its
 * feeds at once (`SnapshotJob.release`).
 */
object Prefetcher extends Logging {
  /**
   * Polled calls in flight per JVM: one per [[ShardsPerCallSlot]] shards read here, at least [[MinCallsInFlight]],
   * at most [[MaxCallsInFlight]] (the sync client's connections leave as many again to a sink in the same JVM,
   * `KinesisClientFactory`). Calls a second are the slots over a call's time: a fixed 32 served 590 calls a second
   * at 10,000 shards where calls took 50 ms, while the idle budget alone wants 500 and each busy shard one or more.
   */
  def callSlots(shards: Int): Int = math.min(MaxCallsInFlight, math.max(MinCallsInFlight, shards / ShardsPerCallSlot))
  val MinCallsInFlight = 32
  val MaxCallsInFlight = 128
  val ShardsPerCallSlot = 80
  /** While other calls wait for a slot too, the idle budget's polls take one start in this many ([[ReadyQueue]]). */
  val IdlePollShare = 4
  /**
   * Answers in flight may bring at most 1/32 of the buffer: while decoded they are on the heap several times over,
   * more than [[ShardFeed.AnswerHeapFactor]] at moments (measured on a 10 KiB-record drain with a 128 MiB buffer,
   * live heap beyond the buffer: about half the buffer with no share, 88-118 MiB at 1/8, 66 at 1/16 and 1/24,
   * 23-36 at 1/32, where reads under quota stay at 1.0 of it).
   */
  val InFlightShare = 32
  /** The longest one call may take, retries included, before its feed fails. */
  val CallTimeout: java.time.Duration = java.time.Duration.ofMinutes(5)
  val AbandonedFloor: java.time.Duration = java.time.Duration.ofSeconds(30)
  private val MaxGapNanos = java.time.Duration.ofMinutes(30).toNanos
  private val AwaitTickNanos = java.time.Duration.ofMillis(20).toNanos
  /** Where the JVM's grid of idle polls starts ([[ShardFeed.burstAligned]]). */
  private val BurstOriginNanos = System.nanoTime()
  /** Kinesis' clock as this JVM sees it, for calls planned on a shard's cadence. */
  private val arrivalClock = new ArrivalClock()

  private val feeds = new ConcurrentHashMap[(String, ShardKey), ShardFeed]()
  private val held = new AtomicLong()
  private val heldBySource = new ConcurrentHashMap[String, AtomicLong]()
  /** Bytes that calls in flight may bring, counted against the buffer before they are made. */
  private val reserved = new AtomicLong()
  private val firstAnswers = new LongAdder
  /**
   * Feeds whose pacing allows a polled call ([[ReadyQueue]]); feeds waiting for buffer space, oldest first; the
   * calls running. Touched on the scheduler thread only.
   */
  private val readyToCall = new ReadyQueue[ShardFeed](IdlePollShare)
  private val queueTotals = new CallQueueTotals.Adders
  /** Feeds whose records are pushed (enhanced fan-out), ready for their next answer: they take no call slot. */
  private val pushedReady = new java.util.ArrayDeque[ShardFeed]()
  private val waitingForMemory = new RoomWaiters[ShardFeed]
  @volatile private var callsInFlight = 0
  private val reReads = new ConcurrentHashMap[String, AtomicLong]()
  /** Per source: misplaced KPL aggregates skipped, malformed ones read whole ([[AggregateCounts]]). */
  private val oddAggregates = new ConcurrentHashMap[String, (AtomicLong, AtomicLong)]()
  private val tallies = new ConcurrentHashMap[String, CallTally]()
  private val fanOutTallies = new ConcurrentHashMap[String, FanOutTally]()
  private val signals = new ConcurrentHashMap[String, Object]()
  private val changeCounts = new ConcurrentHashMap[String, AtomicLong]()
  /** Sources whose query stopped (each stream instance has an id of its own), remembered for a while. */
  private val released = new ConcurrentHashMap[String, java.lang.Long]()
  private val activity = new ConcurrentHashMap[String, Activity]()
  /** Per source: how to signal its driver (None: it cannot be reached from here), and whether a change is to be. */
  private val driverLinks = new ConcurrentHashMap[String, DriverLink]()

  private final class DriverLink(val send: Option[Any => Unit]) {
    val armed = new java.util.concurrent.atomic.AtomicBoolean(false)
  }

  /** When a query last used this JVM's feeds, and the longest it went without. */
  private final class Activity {
    @volatile var lastNanos: Long = System.nanoTime()
    @volatile var longestGapNanos: Long = 0L
    def touch(): Unit = {
      val now = System.nanoTime()
      longestGapNanos = math.min(MaxGapNanos, math.max(longestGapNanos, now - lastNanos))
      lastNanos = now
    }
  }

  private lazy val scheduler: ScheduledExecutorService = {
    val s = DaemonThreads.singleScheduler("kinesis-prefetch")
    s.scheduleWithFixedDelay(() => evictAbandoned(), 1, 1, TimeUnit.SECONDS)
    s
  }

  /** The default `fetchBufferSize`: an eighth of the heap, safe next to Spark's own use of it. */
  def defaultBufferBytes: Long = FetchBufferCap.maxHeapBytes / 8

  /** The option as this JVM can hold it ([[FetchBufferCap]]), else the default. */
  def bufferLimit(config: SourceConfig): Long =
    config.fetchBufferSize.map(FetchBufferCap(_)).getOrElse(defaultBufferBytes)

  /** Bytes of records held in this JVM, all queries together. */
  def heldBytes: Long = held.get()

  /**
   * Bytes of records held in this JVM for one query: counted as they change, since a snapshot task reports it on
   * every trigger and summing the feeds was a pass over all of them (at 10,000 shards, a third of the task's CPU).
   */
  def heldBytesOf(sourceId: String): Long = Option(heldBySource.get(sourceId)).map(_.get()).getOrElse(0L)

  private def addHeld(sourceId: String, bytes: Long): Unit = if (bytes != 0) {
    held.addAndGet(bytes)
    heldBySource.computeIfAbsent(sourceId, _ => new AtomicLong()).addAndGet(bytes)
  }

  /** The engine's state in a line, for a log or a failing test: what holds memory and call slots (the queue
   * lengths are read outside the scheduler thread: approximate). */
  def describe: String =
    s"feeds=${feeds.size()} heldBytes=${held.get()} reservedBytes=${reserved.get()} callsInFlight=$callsInFlight " +
      s"readyToCall=${readyToCall.size} (idle ${readyToCall.idleSize}) waitingForMemory=${waitingForMemory.size}"

  /** Calls running now and the bytes they reserved, all queries together. */
  def callsInFlightNow: Int = callsInFlight
  /** How long polled calls waited for a slot and took, all queries together, since this JVM started. */
  def callQueueTotals: CallQueueTotals = queueTotals.snapshot()
  def reservedBytes: Long = reserved.get()

  /** Shards read in this JVM, all queries together. */
  def feedCount: Int = feeds.size()
  /** The sources that have feeds here now, and a source's feeds (for tests). */
  private[sparkkinesis] def sourceIds: Set[String] = feeds.keySet().asScala.map(_._1).toSet
  private[sparkkinesis] def feedsOf(sourceId: String): Seq[ShardFeed] =
    feeds.asScala.collect { case ((id, _), feed) if id == sourceId => feed }.toSeq

  /** Shards read in this JVM that have not had an answer yet (a queue of calls longer than the slots serve). */
  def unansweredFeedCount: Int = feeds.values().asScala.count(!_.hasPolled)
  /**
   * Feeds' first answers since this JVM started, all queries together: a new query's shards have all answered once
   * it grew by their number (benchmarks read it often; counting the unanswered feeds walks all of them).
   */
  def firstAnswerCount: Long = firstAnswers.sum()

  /**
   * The feed of `key` for a batch that starts at `from`: the running one when it has reached `from` (what it held
   * before `from` is dropped: that batch committed), else a new one that starts there. `runEnd`: see
   * [[RunEnd]]; `hashKeys`: the shard's range, when known (misplaced KPL aggregates are skipped); `closed`: the
   * listing shows the shard closed.
   */
  def feedFor(
      sourceId: String,
      config: SourceConfig,
      key: ShardKey,
      from: ShardPosition,
      runEnd: Option[RunEnd],
      spill: Boolean,
      hashKeys: Option[HashKeySpan],
      closed: Boolean = false): ShardFeed = {
    if (released.containsKey(sourceId)) {
      // A snapshot task of a query that stopped while it was being scheduled: it must not start reading again.
      val gone = new ShardFeed(sourceId, key, from, config, runEnd, spill, null)
      gone.stopped = true
      return gone
    }
    var created: ShardFeed = null
    var freed = 0L
    val feed = feeds.compute(
      (sourceId, key),
      (_, existing) =>
        if (existing != null && !existing.stopped && existing.spill == spill &&
          existing.commit(from).map(f => freed = f).isDefined) existing
        else {
          if (existing != null) stop(existing)
          created = new ShardFeed(
            sourceId,
            key,
            from,
            config,
            runEnd,
            spill,
            fetcher(sourceId, config, key, from, spill, hashKeys))
          created
        }
    )
    // Before a new feed's first call is dispatched (below): an answer at a closed shard's tip must not end it.
    if (closed) feed.markClosed()
    touch(feed)
    addHeld(sourceId, -freed)
    if (created != null) dispatch(created)
    if (freed > 0 || created != null) wakeWaitingForMemory()
    feed
  }

  /**
   * How a feed reads: through the query's enhanced fan-out consumer when it has one for the stream, else by
   * polling. Batch reads poll (a range read once needs no subscription).
   */
  private def fetcher(
      sourceId: String,
      config: SourceConfig,
      key: ShardKey,
      from: ShardPosition,
      spill: Boolean,
      hashKeys: Option[HashKeySpan]): ShardFetcher =
    config.fanOut.flatMap(_.consumerArns.get(key.stream)).filter(_ => !spill) match {
      case Some(arn) => new FanOutFetcher(
          KinesisClientFactory.fanOut(config.connection),
          config,
          key,
          arn,
          from,
          tallyOf(sourceId),
          fanOutTallyOf(sourceId),
          hashKeys)
      case None =>
        new PollingFetcher(KinesisClientFactory.sync(config.connection), config, key, from, tallyOf(sourceId), hashKeys)
    }

  /** The feed of a shard for a batch task, marked as used. */
  def get(sourceId: String, key: ShardKey): Option[ShardFeed] = Option(feeds.get((sourceId, key))).map { f =>
    touch(f); f
  }

  private def touch(feed: ShardFeed): Unit = {
    feed.touch()
    activity.computeIfAbsent(feed.sourceId, _ => new Activity).touch()
  }

  /** Feeds a snapshot task reuses as they are ([[StandingGroups]]), marked as used: their source once. */
  def kept(sourceId: String, reused: Seq[ShardFeed]): Unit = {
    reused.foreach(_.touch())
    activity.computeIfAbsent(sourceId, _ => new Activity).touch()
  }

  /** Drops one feed, e.g. a batch read's once its task has its records (a batch read reads each range once). */
  def drop(sourceId: String, key: ShardKey): Unit = {
    Option(feeds.remove((sourceId, key))).foreach(stop)
    wakeWaitingForMemory()
  }

  /** Drops every feed of a source, e.g. when its query stops. */
  def release(sourceId: String): Unit = {
    released.put(sourceId, System.nanoTime())
    StandingGroups.release(sourceId)
    feeds.entrySet().removeIf { e =>
      val mine = e.getKey._1 == sourceId; if (mine) stop(e.getValue); mine
    }
    forget(sourceId)
    wakeWaitingForMemory()
  }

  private def forget(sourceId: String): Unit = {
    heldBySource.remove(sourceId)
    StandingGroups.release(sourceId)
    reReads.remove(sourceId)
    oddAggregates.remove(sourceId)
    tallies.remove(sourceId)
    fanOutTallies.remove(sourceId)
    activity.remove(sourceId)
    signals.remove(sourceId)
    changeCounts.remove(sourceId)
    driverLinks.remove(sourceId)
  }

  /** The calls this JVM made for a source's feeds, since they started here. */
  def tallyOf(sourceId: String): CallTally = tallies.computeIfAbsent(sourceId, _ => new CallTally)

  /** What enhanced fan-out did in this JVM for a source's feeds. */
  def fanOutTallyOf(sourceId: String): FanOutTally = fanOutTallies.computeIfAbsent(sourceId, _ => new FanOutTally)

  def countReRead(sourceId: String): Unit = reReads.computeIfAbsent(sourceId, _ => new AtomicLong()).incrementAndGet()
  def reReadCount(sourceId: String): Long = Option(reReads.get(sourceId)).map(_.get()).getOrElse(0L)

  /** KPL aggregates this JVM's feeds of a source did not split ([[KplDeaggregator]]), since they started here. */
  def aggregateCounts(sourceId: String): AggregateCounts =
    Option(oddAggregates.get(sourceId)).map { case (m, b) => AggregateCounts(m.get(), b.get()) }
      .getOrElse(AggregateCounts.zero)

  private def countAggregates(sourceId: String, c: AggregateCounts): Unit = if (!c.isZero) {
    val (m, b) = oddAggregates.computeIfAbsent(sourceId, _ => (new AtomicLong(), new AtomicLong()))
    m.addAndGet(c.misplaced)
    b.addAndGet(c.malformed)
  }

  /**
   * Waits until `done` holds or the deadline passes, waking whenever a call of this source's feeds completes.
   * `done` is evaluated under the source's signal, so no completion goes unnoticed.
   */
  def await(sourceId: String, deadlineNanos: Long)(done: => Boolean): Unit = {
    val signal = signalOf(sourceId)
    signal.synchronized {
      var remaining = deadlineNanos - System.nanoTime()
      while (!done && remaining > 0) {
        // Also woken every few milliseconds: `done` may turn true with time alone (a linger ending).
        TimeUnit.NANOSECONDS.timedWait(signal, math.min(remaining, AwaitTickNanos))
        remaining = deadlineNanos - System.nanoTime()
      }
    }
  }

  private def signalOf(sourceId: String): Object = signals.computeIfAbsent(sourceId, _ => new Object)

  /**
   * Counts the completions that changed what a source's feeds offer (records, a first answer, caught up or not,
   * an end or a failure): a waiter re-examines its feeds only when this moved, however many shards it has.
   */
  def changes(sourceId: String): Long = changesOf(sourceId).get()

  /**
   * What a source's feeds offer may have changed: its waiters look again. A source nobody waited on yet has no
   * counter (a first wait looks at its feeds anyway), and a forgotten source does not get one back.
   */
  private def changed(sourceId: String): Unit = {
    Option(changeCounts.get(sourceId)).foreach(_.incrementAndGet())
    Option(signals.get(sourceId)).foreach(signal => signal.synchronized(signal.notifyAll()))
    signalDriver(sourceId)
  }

  /**
   * A snapshot task is about to report what this executor holds: the next change here is signalled to the
   * driver (once, until the next snapshot task arms it again). The first time, the driver's endpoint is looked
   * up (a round trip to the driver: hence in a task). Whether this executor can signal the driver.
   */
  def armDriverSignal(sourceId: String): Boolean =
    !released.containsKey(sourceId) && {
      val link = driverLinks.computeIfAbsent(
        sourceId,
        id => new DriverLink(org.apache.spark.sparkkinesis.DriverChannel.connect(DriverSignal.endpointName(id))))
      link.armed.set(true)
      link.send.isDefined
    }

  private def signalDriver(sourceId: String): Unit =
    if (!released.containsKey(sourceId)) Option(driverLinks.get(sourceId)).foreach { link =>
      if (link.armed.compareAndSet(true, false)) link.send.foreach(_(FeedsChanged(sourceId)))
    }

  private def changesOf(sourceId: String): AtomicLong = changeCounts.computeIfAbsent(sourceId, _ => new AtomicLong())

  private def stop(feed: ShardFeed): Unit = {
    feed.stopped = true
    addHeld(feed.sourceId, -feed.release())
    // Its call gives back its slot and reservation now: with retries until success (the default), a call of a
    // stopped query to an endpoint gone away would otherwise hold them for good.
    Option(feed.inFlight).foreach(_.cancel(false))
    Option(feed.fetcher).foreach(_.close())
    changed(feed.sourceId) // a snapshot waiting on it must not wait for it any more
  }

  private def dispatch(feed: ShardFeed): Unit = scheduler.execute(() => tryCall(feed))

  private def dispatchIn(feed: ShardFeed, nanos: Long): Unit =
    if (nanos <= 0) dispatch(feed) else scheduler.schedule((() => tryCall(feed)): Runnable, nanos, TimeUnit.NANOSECONDS)

  /** Runs on the scheduler thread: `feed` joins the queue for a call once its pacing allows. */
  private def tryCall(feed: ShardFeed): Unit = {
    if (feed.finished) return
    val wait = feed.nextCallNanos - System.nanoTime()
    if (wait > 0) return dispatchIn(feed, wait)
    feed.readySinceNanos = System.nanoTime()
    queue(feed, first = false)
    startCalls()
  }

  private def queue(feed: ShardFeed, first: Boolean): Unit =
    if (!feed.fetcher.pushed) readyToCall.add(feed, idlePoll(feed), first)
    else if (first) pushedReady.addFirst(feed)
    else pushedReady.addLast(feed)

  /**
   * The feed's next call is the idle budget's: [[ShardFeed.BudgetAfterPolls]] empty answers at its tip in a row
   * (fewer may be a sparse shard's gap between records). Such calls yield slots to the others ([[ReadyQueue]]).
   */
  private def idlePoll(feed: ShardFeed): Boolean = feed.idlePolls >= ShardFeed.BudgetAfterPolls

  /**
   * Scheduler thread only: starts the calls of the feeds that waited longest while call slots are free, so with
   * more shards than slots every shard still gets its turn (first come, first served, the idle budget's polls with
   * a share of their own: nobody starves).
   */
  private def startCalls(): Unit = {
    // Pushed reads are not held to the in-flight share: their asks stay outstanding while shards are quiet (one
    // per shard, each reserving what its events have been bringing), and an event is no 10 MiB answer.
    def free(feed: ShardFeed) = {
      val limit = bufferLimit(feed.config)
      val room = if (feed.fetcher.pushed) limit - held.get()
      else math.min(limit - held.get(), ShardFeed.AnswerHeapFactor * limit / InFlightShare)
      room - reserved.get()
    }
    // A polled call waits for room for a useful answer (ShardFeed.minCallBytes): with the buffer nearly full,
    // thirty-two calls of a few records each would cost far more CPU per record than a few full ones.
    def needed(feed: ShardFeed) = if (feed.fetcher.pushed) 1L
    else math.max(
      1L,
      ShardFeed.AnswerHeapFactor *
        feed.minCallBytes(ShardReader.callTargetBytes(feed.config), bufferLimit(feed.config) / InFlightShare))
    val slots = callSlots(feeds.size())
    // Whether the feed went: to a call, or to wait for room in line; not when a polled call any room suits finds
    // none at all.
    def start(feed: ShardFeed): Boolean =
      if (feed.finished) true
      else {
        val room = free(feed)
        lazy val wants = needed(feed)
        if (feed.spill || room >= wants) {
          call(feed, math.max(room, 1L), firstCallShare(feed, slots))
          true
        } else if (feed.fetcher.pushed || wants > 1L) {
          waitingForMemory.add(feed, anySize = wants <= 1L)
          true
        } else false
      }
    // Space freed (a commit, a call's answer smaller than it might have been): as many as can start go, the
    // longest waiting first; a shard behind its tip waiting for room for a full call holds back no quiet one.
    if (!waitingForMemory.isEmpty) {
      // A stopped query's feeds go as they come up (start drops them), taking no slot.
      val released = waitingForMemory.release(
        slots - callsInFlight,
        feed => !feed.fetcher.pushed && !feed.finished,
        feed => feed.finished || free(feed) >= needed(feed))
      released.reverseIterator.foreach(queue(_, first = true))
    }
    while (!pushedReady.isEmpty) start(pushedReady.pollFirst())
    // A polled call that any room suits and finds none keeps its place, and no other starts until an answer frees
    // some (they need the same room: one buffer). Sent to wait in a line apart, such calls lost the queue's order
    // (reads before the idle budget's polls), and a new query's 10,000 first calls went back and forth between the
    // two on every answer.
    var room = true
    while (room && callsInFlight < slots && !readyToCall.isEmpty) {
      val feed = readyToCall.poll()
      room = start(feed)
      if (!room) readyToCall.putBack(feed, idlePoll(feed))
    }
  }

  /**
   * The answer a polled feed's first call may aim at: an equal part of the room answers in flight may take, among
   * the calls that could start now. Nothing is known of the shard yet (a `latest` start finds nothing), and a
   * first call aiming at a second of the shard's quota took all the room left: a new query over 10,000 shards then
   * made its first calls one answer at a time. A few shards still aim at their quota's second. Batch reads are not
   * held.
   */
  private def firstCallShare(feed: ShardFeed, slots: Int): Long =
    if (feed.fetcher.pushed || feed.spill || feed.hasPolled) Long.MaxValue
    else {
      // The room in flight is AnswerHeapFactor times this (see `free`): answers decode to about that much heap.
      val calls = math.min(slots.toLong, 1L + readyToCall.size + waitingForMemory.size)
      bufferLimit(feed.config) / InFlightShare / math.max(1L, calls)
    }

  private def call(feed: ShardFeed, free: Long, firstShare: Long): Unit = {
    val slot = !feed.fetcher.pushed
    if (slot) callsInFlight += 1
    val startedNanos = System.nanoTime()
    if (slot) queueTotals.started(idlePoll(feed), startedNanos - feed.readySinceNanos)
    val plan = feed.nextCall(free, ShardReader.callTargetBytes(feed.config), firstShare)
    val expected = ShardFeed.AnswerHeapFactor * plan.answerBytes
    reserved.addAndGet(expected)
    val call =
      try feed.fetcher.poll(plan.limit)
      catch { case e: Throwable => CompletableFuture.failedFuture[Poll](e) }
    feed.inFlightSinceNanos = startedNanos
    feed.inFlight = call
    if (feed.stopped) call.cancel(false) // stopped while the call was being made
    call.whenComplete { (poll: Poll, error: Throwable) =>
      try {
        if (slot) queueTotals.answered(System.nanoTime() - startedNanos)
        reserved.addAndGet(-expected)
        completed(feed, poll, error, startedNanos)
      } catch {
        case NonFatal(e) => logWarning(s"Taking the answer for ${feed.key} failed", e); feed.onFailure(e)
      } finally scheduler.execute { () => // its reservation is back: waiters may go; the feed waits for its next call
          if (slot) callsInFlight -= 1
          tryCall(feed)
          startCalls()
        }
    }
  }

  /**
   * A call that never ends would hold its slot and its reservation for good: the SDK's own timeouts should end it
   * first, this bounds it whatever happens (checked every second, not a timer per call: one a call woke a thread
   * each time). A pushed answer waits as long as its shard is quiet, so it has no bound.
   */
  private def endOverdueCall(feed: ShardFeed, now: Long): Unit = {
    val call = feed.inFlight
    if (call != null && !feed.fetcher.pushed && !call.isDone && now - feed.inFlightSinceNanos > CallTimeout.toNanos)
      call.completeExceptionally(new TimeoutException(s"a call for ${feed.key} took longer than " +
        s"${CallTimeout.toMinutes} minutes, retries included (bound them with apiCallTimeout or retryMaxAttempts)"))
  }

  private def completed(feed: ShardFeed, poll: Poll, error: Throwable, startedNanos: Long): Unit = {
    val (polledBefore, caughtUpBefore) = (feed.hasPolled, feed.caughtUp)
    if (error != null) {
      // A stopped feed's call ends as its stop cancelled it: not the shard's failure. Recorded, it failed a snapshot
      // task that looked at the feed after the query stopped (a task Spark's cancellation missed: an ERROR per stop).
      if (!feed.stopped) {
        val cause = PollingFetcher.cause(error)
        logWarning(s"Reading Kinesis shard ${feed.key} failed: $cause")
        feed.onFailure(cause)
      }
    } else if (!feed.stopped) {
      val limit = bufferLimit(feed.config)
      addHeld(feed.sourceId, feed.onPoll(poll, size => held.get() + reserved.get() + size <= limit))
      countAggregates(feed.sourceId, poll.aggregates)
      val pace = ShardReader.pacingNanos(feed.config, poll.bytes)
      val found = poll.records.size
      val nowMillis = System.currentTimeMillis()
      val arrivedOver = if (feed.fetcher.pushed) 0L
      else feed.cadence.answered(
        found,
        if (found > 0) poll.records.arrivalMillis(found - 1) else 0L,
        feed.caughtUp,
        arrivalClock,
        nowMillis)
      // How long the records found took to arrive: by their arrival times when the answer before had records at
      // the tip too (calls on a cadence do not move it), else by the calls' times.
      val sinceLastCall = if (arrivedOver > 0) arrivedOver
      else if (feed.lastCallNanos == 0L) 0L else startedNanos - feed.lastCallNanos
      feed.sparseNanos = if (!feed.caughtUp) 0L
      else if (found == 0) feed.sparseNanos
      else ShardFeed.sparseWaitNanos(found, sinceLastCall, feed.config.idlePollCap)
      feed.lastCallNanos = startedNanos
      val idle = if (found > 0) feed.sparseNanos
      else ShardFeed.idleWaitNanos(
        feed.idlePolls,
        feed.config.minFetchPeriod,
        feed.config.idlePollCap,
        feed.sparseNanos,
        idleBudgetNanos,
        feed.config.idleCapBindsBudget)
      // Only a silent shard's wait ends on the grid: a sparse shard's wait is the time its next record is due, and
      // a call brought a part of a tick before it finds nothing (measured: p95 put->row at 1000 shards with a
      // record each a second 356 ms -> 1,182 ms when sparse waits were aligned too).
      val alignable = if (found == 0 && idle > feed.sparseNanos) idle else 0L
      // Spaced from the call's start, as Kinesis counts calls and bytes when it serves them: a call's own time
      // is not lost from the shard's quota (measured: 0.91-0.95 of the quota paced from the answer instead).
      feed.nextCallNanos = if (feed.fetcher.pushed) System.nanoTime()
      else feed.cadence.nextCall(
        found,
        feed.caughtUp,
        arrivalClock,
        System.nanoTime(),
        nowMillis,
        ShardFeed.burstAligned(startedNanos + math.max(pace, idle), alignable, startedNanos + pace, BurstOriginNanos),
        startedNanos + pace
      )
      if (feed.stopped) addHeld(feed.sourceId, -feed.release())
    }
    if (feed.hasPolled && !polledBefore) firstAnswers.increment()
    // Waiters re-check only when what they wait for may have changed: an idle shard's empty answer changes nothing.
    if (error != null || (poll != null && !poll.records.isEmpty) || feed.hasPolled != polledBefore ||
      feed.caughtUp != caughtUpBefore || feed.finished) changed(feed.sourceId)
  }

  private def wakeWaitingForMemory(): Unit = scheduler.execute(() => startCalls())

  /** Feeds of this JVM polled as idle (their last answers at the tip were empty), counted every second. */
  @volatile private var idleFeeds = 0

  /**
   * How long apart this JVM's idle feeds are polled so that together they make at most [[ShardFeed.IdleCallsPerSecond]]
   * calls a second: once a second while that is within the budget, further apart, evenly, beyond it.
   */
  private def idleBudgetNanos: Long = ShardFeed.idleBudgetNanos(idleFeeds)

  private def evictAbandoned(): Unit = {
    val now = System.nanoTime()
    idleFeeds = feeds.values().asScala.count(f => f.idlePolls > 0 && !f.fetcher.pushed)
    def unusedFor(sourceId: String) =
      math.max(AbandonedFloor.toNanos, 3 * Option(activity.get(sourceId)).map(_.longestGapNanos).getOrElse(0L))
    StandingGroups.evict(now, unusedFor)
    feeds.entrySet().removeIf { e =>
      endOverdueCall(e.getValue, now)
      val gone = e.getValue.abandoned(now, unusedFor(e.getKey._1))
      if (gone) {
        logInfo(s"Dropping the prefetch of ${e.getValue.key}: no batch asked for it in a while")
        stop(e.getValue)
      }
      gone
    }
    released.entrySet().removeIf(e => now - e.getValue > 2 * MaxGapNanos)
    // What a query that vanished without stopping (its driver died) left here.
    activity.entrySet().asScala.filter(e => now - e.getValue.lastNanos > 2 * MaxGapNanos).foreach(e => forget(e.getKey))
    wakeWaitingForMemory()
  }
}
