package io.github.sparkkinesis.source
package executor

/**
 * When a shard with regular traffic gets its next record: one record every `period` (telemetry, heartbeats, a
 * producer flushing on a timer). Such a shard is polled about once a period ([[ShardFeed.sparseWaitNanos]]) at
 * whatever phase its calls fell on, so its records waited half a period on average before a call found them: at a
 * record a second, 500 ms of the put→row latency. A call planned just after the next record is due finds it at
 * once, with as many calls as before. The due time is on Kinesis' clock (arrival times), placed on this JVM's by
 * an [[ArrivalClock]]. Traffic that is not regular (gaps that differ, several records an answer) plans nothing
 * here. Its feed's answers come one after the other (a call is made once the one before ended).
 */
final class ShardCadence {
  import ShardCadence._

  private var newest = Long.MinValue
  private var gap = 0L
  private var agreeing = 0
  private var jitter = 0L
  private var slack = 0L
  private var misses = 0
  private var made: CadenceCall = Unplanned

  /**
   * The feed's last call found `found` records (the newest arrived at `newestArrival`, Kinesis' clock), `atTip`
   * or not, its answer read at `nowMillis`. Returns how long the records took to arrive (ns, by their arrival
   * times), 0 when that is not known. Answers of calls not planned here teach `clock`.
   */
  def answered(found: Int, newestArrival: Long, atTip: Boolean, clock: ArrivalClock, nowMillis: Long): Long =
    synchronized {
      if (!atTip) { reset(); 0L }
      else if (found == 0) { if (made == Due) missed(); 0L }
      else {
        if (made == Unplanned) clock.observe(newestArrival, nowMillis)
        if (made == Due) misses = 0
        math.max(0L, observe(found, newestArrival)) * 1000000L
      }
    }

  /**
   * When the feed's next call goes (System.nanoTime), after [[answered]]: `planned`, or sooner, never before
   * `earliest`, just after the next record is due. A call made when a record was due that found nothing is made
   * once more after the margin; the shard is then polled as planned until its gaps agree again.
   */
  def nextCall(
      found: Int,
      atTip: Boolean,
      clock: ArrivalClock,
      nowNanos: Long,
      nowMillis: Long,
      planned: Long,
      earliest: Long): Long = synchronized {
    val due: Option[(Long, CadenceCall)] =
      if (!atTip) None
      else if (found > 0) nextArrivalMillis.map(a => clock.toNanos(a + marginMillis, nowNanos, nowMillis) -> Due)
      else if (made == Due) Some((nowNanos + marginMillis * 1000000L) -> Retry)
      else None
    val next = aligned(planned, due.map(_._1), earliest)
    // A planned call at most a margin before the due time is for the due record too (the planned wait is capped
    // at a second, a gap may be a little longer): if it finds nothing, it is made once more.
    made = due.filter(next >= _._1 - marginMillis * 1000000L).fold(Unplanned: CadenceCall)(_._2)
    next
  }

  /** How the next call was planned. */
  def nextCallIs: CadenceCall = synchronized(made)

  /**
   * An answer at the tip brought `records` (at least one), the newest of them arrived at `arrivalMillis`. Returns
   * how long they took to arrive (ms, from the newest record of the answer before), -1 when that is not known.
   */
  private[source] def observe(records: Int, arrivalMillis: Long): Long = {
    val span = if (newest == Long.MinValue) -1L else math.max(0L, arrivalMillis - newest)
    val g = if (records == 1) span else -1L
    val off = math.abs(g - gap)
    if (g > 0 && gap > 0 && off <= math.max(ToleranceMillis, gap / ToleranceShare)) {
      agreeing += 1
      jitter = math.max(off, jitter - jitter / JitterMemory)
    } else {
      agreeing = 0
      jitter = 0
    }
    gap = math.max(0L, g)
    newest = arrivalMillis
    span
  }

  /** A call made when a record was due found nothing: the traffic is not as regular as it looked. */
  private[source] def missed(): Unit = { agreeing = 0; slack += MinMarginMillis; misses += 1 }

  /** Behind the tip (a backlog, a reset): what was seen says nothing about the next record's time. */
  def reset(): Unit = {
    newest = Long.MinValue; gap = 0; agreeing = 0; jitter = 0; slack = 0; misses = 0; made = Unplanned
  }

  /** When the next record arrives (Kinesis' clock, ms), once [[Regular]] gaps in a row agreed, unless calls missed. */
  def nextArrivalMillis: Option[Long] = if (agreeing >= Regular && misses < MaxMisses) Some(newest + gap) else None

  /**
   * How long after its due time the call for the next record goes: twice the gaps' recent disagreement, and
   * [[MinMarginMillis]] more for each call that found nothing when its record was due, at most a quarter of the gap.
   */
  def marginMillis: Long = math.min(gap / 4, math.max(MinMarginMillis, 2 * jitter) + slack)
}

object ShardCadence {
  /** Why a feed's next call goes when it does: as its shard's pacing and silence plan it, or on its cadence. */
  sealed trait CadenceCall
  case object Unplanned extends CadenceCall
  /** Just after the shard's next record is due. */
  case object Due extends CadenceCall
  /** Once more after a call on the cadence found nothing. */
  case object Retry extends CadenceCall

  /** Gaps between records agree when they differ by at most this, or by a [[ToleranceShare]]th of the gap. */
  val ToleranceMillis = 50L
  val ToleranceShare = 10L
  /** Agreeing gaps in a row before calls follow the cadence: three, so a coincidence does not. */
  val Regular = 3
  /** Calls go at least this long after a record is due: producers' clocks and the service's own lag vary. */
  val MinMarginMillis = 20L
  /**
   * Calls made when a record was due that found nothing, none in between finding its record, before the shard is
   * no longer polled on its cadence (until it falls behind its tip): its records do not come when their gaps say,
   * or the clocks disagree by more than a quarter of the gap.
   */
  val MaxMisses = 5
  /** The gaps' disagreement is remembered over about this many gaps. */
  val JitterMemory = 8L

  /**
   * The call for a regular shard's next record: at `dueNanos` (its due time here, margin included) when that is
   * no later than the call `plannedNanos` the shard would make anyway, never before `earliestNanos` (its pacing).
   */
  def aligned(plannedNanos: Long, dueNanos: Option[Long], earliestNanos: Long): Long = dueNanos match {
    case Some(due) if due <= plannedNanos => math.max(earliestNanos, due)
    case _ => plannedNanos
  }
}

/**
 * Kinesis' clock (arrival times) as this JVM's wall clock sees it, for planning calls on a cadence. The clocks are
 * taken to agree (NTP; Amazon Time Sync on EC2) unless answers show Kinesis' clock ahead: an answer's newest
 * record was readable before the answer came, so `arrival - answered` (ms) is at most the offset between the
 * clocks, less the service's lag. The largest such bound of the last one or two windows is kept (clocks drift),
 * when it is above zero. Were Kinesis' clock behind this one, calls on a cadence would come early and miss:
 * misses widen the margin ([[ShardCadence.marginMillis]]), and after [[ShardCadence.MaxMisses]] the shard is
 * polled as before. Only calls not planned on a cadence are counted: a call made on purpose just after a record
 * is due says nothing new. Thread-safe.
 */
final class ArrivalClock(windowMillis: Long = ArrivalClock.WindowMillis) {
  private var current = Long.MinValue
  private var currentSince = 0L
  private var previous = Long.MinValue

  def observe(arrivalMillis: Long, answeredMillis: Long): Unit = synchronized {
    val bound = arrivalMillis - answeredMillis
    if (current == Long.MinValue || answeredMillis - currentSince >= windowMillis) {
      previous = current
      current = bound
      currentSince = answeredMillis
    } else current = math.max(current, bound)
  }

  /** How far Kinesis' clock is ahead of this one (ms): 0 unless answers showed more. */
  def offsetMillis: Long = synchronized(math.max(0L, math.max(current, previous)))

  /** `arrivalMillis` (Kinesis' clock) as a System.nanoTime value, given the clocks' readings `nowNanos`/`nowMillis`. */
  def toNanos(arrivalMillis: Long, nowNanos: Long, nowMillis: Long): Long =
    nowNanos + (arrivalMillis - offsetMillis - nowMillis) * 1000000L
}

object ArrivalClock {
  val WindowMillis = 60000L
}
