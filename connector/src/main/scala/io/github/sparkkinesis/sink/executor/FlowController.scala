package io.github.sparkkinesis.sink
package executor

import java.util.concurrent.TimeUnit

/**
 * Adapts one writer's sending to what the stream's shards accept. Pure logic, driven by the outcome of each
 * PutRecords response, so it can be tested and benchmarked without Kinesis.
 *
 * Load is counted in write units: a record costs `max(1, bytes / 1 KiB)`, so one open shard takes about 1000
 * units per second whether its records are small (1000 records/s quota) or large (1 MiB/s quota).
 */
trait FlowController {
  /** Records per request now (never above the configured maximum). */
  def batchSize: Int

  /**
   * Write units per request now; a request takes at least one record whatever its size. Without it a paced
   * writer of large records (KPL aggregates of 50 KiB) would send `batchSize` of them at once: seconds of a
   * shard's byte quota in one burst, mostly refused.
   */
  def batchUnits: Double = Double.PositiveInfinity

  /** How long this writer waits after sending a request of `units` write units before its next send. */
  def pauseNanos(units: Double): Long

  /** One response came back. */
  def onResponse(response: FlowController.Response): Unit

  /**
   * True while the pauses already keep this writer to what the shards take: records refused as throttled are
   * then resent at the pace, without a retry backoff on top (which would only idle the lane).
   */
  def pacing: Boolean
}

object FlowController {
  /**
   * @param units       write units of the records in the request
   * @param throttled   records refused for throughput
   * @param sentAtNanos when the request left ([[System.nanoTime]]), to tell reactions to old news from new
   * @param fullBatch   the request was as large as the controller allowed: the writer had more to send, so
   *                    a clean response says something about a higher rate
   */
  final case class Response(
      records: Int,
      units: Double,
      throttled: Int,
      sentAtNanos: Long,
      nowNanos: Long,
      fullBatch: Boolean)

  def units(bytes: Long): Double = math.max(1.0, bytes / 1024.0)

  def apply(mode: FlowControlMode, maxBatch: Int, openShards: Int): FlowController = mode match {
    case FlowControlMode.Adaptive => new RateFlowController(maxBatch, openShards)
    case FlowControlMode.Ladder => new LadderFlowController(maxBatch, openShards)
    case FlowControlMode.Aimd => new AimdFlowController(maxBatch)
    case FlowControlMode.Off => new FixedFlowController(maxBatch)
  }

  /** The smallest batch: 10 records per open shard (a request spreads over the shards its keys hash to). */
  def batchFloor(maxBatch: Int, openShards: Int): Int =
    math.min(maxBatch, math.max(MinBatch, MinBatch * math.max(1, openShards)))

  val MinBatch = 10
}

/** Never adapts: full batches, no pause (retries still back off). */
final class FixedFlowController(maxBatch: Int) extends FlowController {
  override def batchSize: Int = maxBatch
  override def pauseNanos(units: Double): Long = 0
  override def onResponse(response: FlowController.Response): Unit = ()
  override def pacing: Boolean = false
}

/**
 * The default: a send rate, off until the shards first refuse records, then paced. Each task keeps its own rate;
 * tasks sharing a shard converge on their shares because each backs off from the same throttling.
 *
 * On the first throttled response the rate starts from what the stream stored for this writer lately (over up to
 * a second), less `decrease`. Each later throttled response cuts the rate again, by the share of the response
 * that was refused, between `decrease` and half: a writer far over the quota comes down in a few round trips, one
 * just over it by a little. Only requests sent after the previous cut count: responses to requests already in
 * flight at a cut report the old rate's overload, and counting them would cut several times for one episode.
 *
 * A refusal is heavy when it kept less than three quarters of the records answered since the last cut and at least
 * five records were refused: a paced request of KPL aggregates carries one or two records, and one refused aggregate
 * says the rate is a little high, not that the load changed.
 *
 * Clean full responses raise the rate. Below 80 % of the rate last refused mildly it doubles every half second, back
 * to that mark, and it doubles without a mark after a first estimate or a heavy refusal (a writer that lost the
 * race for a shard's first burst to another task measures little, and must not crawl up from there); near the
 * mark it probes gently, by `growthPerSecond` of itself per second, faster the longer nothing throttles (the
 * factor grows with the seconds since the last cut, up to doubling per second), so a writer whose neighbour
 * finished grows into the freed share within seconds.
 *
 * Why this reaches the quota: a shard refills what the writer leaves unused while paced below the quota and keeps
 * up to one second of it, and the writer spends that reserve again while it probes above the quota; as long as
 * one cycle's reserve fits in that second, nothing is wasted and the delivered rate averages the quota. Only the
 * records sent between the reserve running dry and the cut taking effect come back throttled. The seed's ladder,
 * by contrast, steps its rate (batch / pause) by factors of four and lands far from the quota.
 *
 * The batch follows the rate: about `targetInterval` worth of units, between the floor and the maximum, so a
 * paced writer sends small requests often rather than large ones in bursts that would drain a shard at once.
 *
 * **A share of the quota (`startShare`)**, when several executors write the shards at once, each pacing them apart
 * (docs/design/sink-flow-control.md, "Several executors"): the rate starts paced at that share of the quota
 * instead of unpaced, and never exceeds the quota (what one writer could use at most). Cuts are as above; growth
 * is additive, [[RateFlowController.SharedGrowthPerSecond]] of the quota a second, while the last cut is less than
 * [[RateFlowController.SharedSettleSeconds]] old (writers that grow by the same amount converge on equal shares;
 * grown in proportion to their rates, two executors kept whatever split of a shard they fell into), and doubles
 * each second once it is older (room a finished writer freed is taken within seconds). The rate never falls below
 * [[RateFlowController.SharedMinUnitsPerSecond]]: a 50 KiB aggregate then waits at most 2.5 s for its turn.
 */
final class RateFlowController(
    maxBatch: Int,
    openShards: Int,
    decrease: Double = 0.1,
    growthPerSecond: Double = 0.1,
    targetIntervalSeconds: Double = 0.1,
    startShare: Option[Double] = None) extends FlowController {
  import FlowController.Response
  import RateFlowController._

  private val floor = FlowController.batchFloor(maxBatch, openShards)
  private val quota = QuotaUnitsPerShard * math.max(1, openShards)
  private val lowest = if (startShare.isDefined) SharedMinUnitsPerSecond else MinUnitsPerSecond
  private var rate = startShare.fold(Double.PositiveInfinity)(s => math.min(quota, math.max(lowest, quota * s)))
  // The rate at the last cut: the writer knows the shards refused it. Unknown (infinite) after the first estimate.
  private var ceiling = Double.PositiveInfinity
  private var lastCutNanos = 0L
  private var lastGrowthNanos = 0L
  private var firstSentNanos = 0L
  private var started = false
  // Units stored per response over about the last second, kept only until the first throttling seeds the rate.
  private val recent = new java.util.ArrayDeque[(Long, Double)]()
  private var recentUnits = 0.0
  // Records answered (and refused) since the last cut, fading over KeptWindow: how much a refusal kept is judged
  // on those, not on one response, since a paced request of large records (KPL aggregates) holds one or two.
  private var answered = 0.0
  private var refused = 0.0
  private var answeredAtNanos = 0L
  // Seconds the first estimate averaged over, while answers to requests sent before it still come in; 0 after.
  private var seedSeconds = 0.0

  /** Write units per second this writer may send; infinite while off. */
  def unitsPerSecond: Double = rate

  override def batchSize: Int =
    if (rate.isInfinite) maxBatch
    else math.max(floor, math.min(maxBatch, (rate * targetIntervalSeconds).toInt))

  // The same bound as batchSize, in units: small records are unaffected, large ones come a few at a time.
  override def batchUnits: Double =
    if (rate.isInfinite) Double.PositiveInfinity else math.max(floor.toDouble, rate * targetIntervalSeconds)

  override def pauseNanos(units: Double): Long =
    if (rate.isInfinite) 0L else (units / rate * 1e9).toLong

  override def pacing: Boolean = !rate.isInfinite

  override def onResponse(r: Response): Unit = {
    if (!started) {
      started = true
      firstSentNanos = r.sentAtNanos
      // Paced from the start: its first request counts as sent after a cut, growth counts from it.
      if (startShare.isDefined) { lastCutNanos = r.sentAtNanos - 1; lastGrowthNanos = r.sentAtNanos }
    }
    // Only the first estimate needs the last second's deliveries.
    if (rate.isInfinite) remember(r.nowNanos, storedUnits(r))
    else if (r.sentAtNanos - lastCutNanos > 0) { count(r); seedSeconds = 0.0 }
    else if (seedSeconds > 0) {
      // The first estimate counted what was answered before the first refusal. Requests in flight then (a writer
      // starts unpaced, several at once) were answered in any order: one wholly refused may come back before those
      // stored, and an estimate from that alone paced the writer from almost nothing (a 50 KiB aggregate a minute).
      // What they stored belongs to the same window.
      rate += storedUnits(r) / seedSeconds * (1 - decrease)
    }
    if (r.throttled > 0) {
      if (rate.isInfinite) {
        val window = math.min(WindowSeconds, math.max(MinWindowSeconds, (r.nowNanos - firstSentNanos) / 1e9))
        cut(recentUnits / window * (1 - decrease), r.nowNanos)
        seedSeconds = window
        recent.clear()
      } else if (r.sentAtNanos - lastCutNanos > 0) {
        val kept = (answered - refused) / answered
        // A mild refusal marks the rate the shards just would not take. A heavy one says the load changed (a
        // neighbour started, the first burst ran dry) and that rate is no guide: search again from the floor up.
        // Heavy needs a few refused records (read as heavy, each refused aggregate let the rate double back at
        // once, and two writers sharing a shard were throttled on 12-15 % of their attempts).
        val heavy = kept < HeavyRefusalKeeps && refused >= HeavyRefusalRecords
        ceiling = if (heavy) Double.PositiveInfinity else rate
        cut(rate * math.min(1 - decrease, math.max(MaxCutKeeps, kept)), r.nowNanos)
      }
    } else if (!rate.isInfinite && r.fullBatch && r.sentAtNanos - lastCutNanos > 0) {
      val elapsed = math.min(1.0, (r.nowNanos - lastGrowthNanos) / 1e9)
      val sinceCut = (r.nowNanos - lastCutNanos) / 1e9
      val mark = ceiling * RecoverTo
      rate =
        if (startShare.isDefined)
          math.min(
            quota,
            if (sinceCut < SharedSettleSeconds) rate + SharedGrowthPerSecond * quota * elapsed
            else rate * math.pow(2, elapsed))
        else if (rate < mark) math.min(mark, rate * math.pow(2, elapsed / DoublingSeconds))
        else rate * (1 + math.min(MaxGrowthPerSecond, growthPerSecond * (1 + sinceCut)) * elapsed)
      lastGrowthNanos = r.nowNanos
    }
  }

  private def storedUnits(r: Response): Double =
    if (r.records == 0) 0.0 else r.units * (r.records - r.throttled) / r.records

  private def cut(to: Double, now: Long): Unit = {
    rate = math.max(lowest, to)
    lastCutNanos = now
    lastGrowthNanos = now
    answered = 0.0
    refused = 0.0
  }

  private def count(r: Response): Unit = {
    val fade = math.exp(-(r.nowNanos - answeredAtNanos) / KeptWindowNanos)
    answered = answered * fade + r.records
    refused = refused * fade + r.throttled
    answeredAtNanos = r.nowNanos
  }

  private def remember(now: Long, units: Double): Unit = {
    recent.addLast((now, units))
    recentUnits += units
    while (now - recent.peekFirst()._1 > WindowNanos) recentUnits -= recent.removeFirst()._2
  }
}

object RateFlowController {
  def apply(maxBatch: Int, openShards: Int, startShare: Option[Double]): RateFlowController =
    new RateFlowController(maxBatch, openShards, startShare = startShare)

  /** The slowest pace: one floor-sized batch of small records per 10 s at worst. */
  val MinUnitsPerSecond = 1.0
  /** What one shard takes a second: 1000 records, or 1 MiB (1024 units). */
  val QuotaUnitsPerShard = 1000.0
  /** With a starting share: the slowest pace, additive growth (of the quota, per second) and for how long after a
    * cut. Chosen in FlowControlModelSuite ("several executors"). */
  val SharedMinUnitsPerSecond = 20.0
  val SharedGrowthPerSecond = 0.05
  val SharedSettleSeconds = 1.0
  /** The deepest single cut keeps half the rate. */
  private val MaxCutKeeps = 0.5
  private val RecoverTo = 0.8
  private val HeavyRefusalKeeps = 0.75
  private val HeavyRefusalRecords = 5.0
  private val MaxGrowthPerSecond = 1.0
  private val DoublingSeconds = 0.5
  private val WindowSeconds = 1.0
  private val MinWindowSeconds = 0.1
  private val WindowNanos = TimeUnit.SECONDS.toNanos(1)
  private val KeptWindowNanos = TimeUnit.MILLISECONDS.toNanos(250).toDouble
}

/**
 * The seed design's ladder (`flowControl=ladder`), kept for comparison. Level 0 is "off": full batches and no
 * pause. Each response with a throttled record climbs one level at once; a run of `cleanRunToRelax` clean
 * responses descends one level. At level n >= 1 the pause is 100 ms * 2^(n-1), capped at 10 s, and the batch
 * halves per level down to a floor of 10 records per open shard.
 */
final class LadderFlowController(maxBatch: Int, openShards: Int, cleanRunToRelax: Int = 5) extends FlowController {
  import LadderFlowController._

  private val floor = FlowController.batchFloor(maxBatch, openShards)
  private var level = 0
  private var cleanRun = 0

  def currentLevel: Int = level

  def delayMillis: Long = if (level == 0) 0 else math.min(MaxDelayMillis, MinDelayMillis << (level - 1))

  override def batchSize: Int = if (level == 0) maxBatch else math.max(floor, maxBatch >> level)

  override def pauseNanos(units: Double): Long = TimeUnit.MILLISECONDS.toNanos(delayMillis)

  override def pacing: Boolean = level > 0

  override def onResponse(r: FlowController.Response): Unit =
    if (r.throttled > 0) {
      level = math.min(level + 1, MaxLevel)
      cleanRun = 0
    } else if (level > 0) {
      cleanRun += 1
      if (cleanRun >= cleanRunToRelax) {
        level -= 1
        cleanRun = 0
      }
    }
}

object LadderFlowController {
  val MinDelayMillis = 100L
  val MaxDelayMillis = 10000L
  /** The first level whose pause reaches the 10 s cap: 100 ms * 2^7 = 12.8 s. */
  val MaxLevel = 8
}

/**
 * Additive increase, multiplicative decrease of the batch size (`flowControl=aimd`; Flink's async sink: +10 per
 * clean response, x0.99 per throttled one), without a pause; kept for comparison.
 */
final class AimdFlowController(maxBatch: Int, increase: Int = 10, decrease: Double = 0.99) extends FlowController {
  private val lowest = math.min(maxBatch, FlowController.MinBatch).toDouble
  private var size: Double = maxBatch

  override def batchSize: Int = size.toInt
  override def pauseNanos(units: Double): Long = 0
  override def pacing: Boolean = false

  override def onResponse(r: FlowController.Response): Unit =
    size = if (r.throttled > 0) math.max(lowest, size * decrease) else math.min(maxBatch.toDouble, size + increase)
}
