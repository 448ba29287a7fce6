package io.github.sparkkinesis.source

/**
 * When a shard with regular traffic gets its next record: one record every `period` (telemetry, heartbeats, a
 * producer flushing on a timer). Such a shard is polled about once a period ([[ShardFeed.sparseWaitNanos]]) at
 * whatever phase its calls fell on, so its records waited half a period on average before a call found them: at a
 * record a second, 500 ms of the put→row latency. A call planned just after the next record is due finds it at
 * once, with as many calls as before. Traffic that is not regular (gaps that differ, several records an answer)
 * plans nothing here. Fed only with answers at the shard's tip; not thread-safe (its feed's completions are
 * sequential).
 */
final class ShardCadence {
  import ShardCadence._

  private var newest = Long.MinValue
  private var gap = 0L
  private var agreeing = 0
  private var jitter = 0L
  private var slack = 0L

  /**
   * An answer at the tip brought `records` (at least one), the newest of them arrived at `arrivalMillis`. Returns
   * how long they took to arrive (ms, from the newest record of the answer before), -1 when that is not known.
   */
  def observe(records: Int, arrivalMillis: Long): Long = {
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
  def missed(): Unit = { agreeing = 0; slack += MinMarginMillis }

  /** Behind the tip (a backlog, a reset): what was seen says nothing about the next record's time. */
  def reset(): Unit = { newest = Long.MinValue; gap = 0; agreeing = 0; jitter = 0; slack = 0 }

  /** When the next record arrives (Kinesis' clock, ms), once [[Regular]] gaps in a row agreed. */
  def nextArrivalMillis: Option[Long] = if (agreeing >= Regular) Some(newest + gap) else None

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
  /** The gaps' disagreement is remembered over about this many gaps. */
  val JitterMemory = 8L

  /**
   * The call for a regular shard's next record: at `dueNanos` (its due time here, margin included) when that is
   * sooner than the call `plannedNanos` the shard would make anyway, never before `earliestNanos` (its pacing).
   */
  def aligned(plannedNanos: Long, dueNanos: Option[Long], earliestNanos: Long): Long = dueNanos match {
    case Some(due) if due < plannedNanos => math.max(earliestNanos, due)
    case _ => plannedNanos
  }
}

/**
 * Kinesis' clock (arrival times) as this JVM's wall clock sees it, for planning calls on a cadence. Each answer
 * with records gives a bound: its newest record was readable before the answer came, so `arrival - answered`
 * (ms) is at most the offset between the clocks less the service's lag; the largest bound of the last minute is
 * kept (clocks drift). It places a record's readability at or after the earliest it could be, never before. Only
 * calls not planned on a cadence are counted: a call made on purpose just after a record would bias the bound
 * by its margin, and the next calls by that more, minute after minute. Thread-safe.
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

  /** The offset of Kinesis' clock over this one (ms), if any answer was seen. */
  def offsetMillis: Option[Long] = synchronized {
    val best = math.max(current, previous)
    if (best == Long.MinValue) None else Some(best)
  }

  /** `arrivalMillis` (Kinesis' clock) as a System.nanoTime value, given the clocks' readings `nowNanos`/`nowMillis`. */
  def toNanos(arrivalMillis: Long, nowNanos: Long, nowMillis: Long): Option[Long] =
    offsetMillis.map(offset => nowNanos + (arrivalMillis - offset - nowMillis) * 1000000L)
}

object ArrivalClock {
  val WindowMillis = 60000L
}
