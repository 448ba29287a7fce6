package io.github.sparkkinesis.sink

/**
 * Adapts one writer's sending to what the stream's shards accept. Pure logic, driven by the outcome of each
 * PutRecords response, so it can be tested and benchmarked without Kinesis.
 */
trait FlowController {
  /** Records per request now (never above the configured maximum). */
  def batchSize: Int

  /** Pause between two sends of this writer now, in milliseconds; 0 while nothing throttles. */
  def delayMillis: Long

  /** One response came back: `records` were in it, `throttled` of them were refused for throughput. */
  def onResponse(records: Int, throttled: Int): Unit
}

object FlowController {
  def apply(mode: FlowControlMode, maxBatch: Int, openShards: Int): FlowController = mode match {
    case FlowControlMode.Adaptive => new LadderFlowController(maxBatch, openShards)
    case FlowControlMode.Aimd => new AimdFlowController(maxBatch)
    case FlowControlMode.Off => new FixedFlowController(maxBatch)
  }
}

/** Never adapts: full batches, no pause (retries still back off). */
final class FixedFlowController(maxBatch: Int) extends FlowController {
  override def batchSize: Int = maxBatch
  override def delayMillis: Long = 0
  override def onResponse(records: Int, throttled: Int): Unit = ()
}

/**
 * The seed design's ladder. Level 0 is "off": full batches and no pause, so a stream with enough shards pays
 * nothing. Each response with a throttled record climbs one level at once; a run of `cleanRunToRelax` clean
 * responses descends one level, so relief comes slowly and a stream at its quota does not oscillate.
 *
 * At level n >= 1 the pause is 100 ms * 2^(n-1), capped at 10 s, and the batch halves per level down to a floor
 * of 10 records per open shard (at least 10, at most the maximum): a request spreads over the shards its keys
 * hash to, so a stream with more shards can take a larger request for the same per-shard load.
 */
final class LadderFlowController(maxBatch: Int, openShards: Int, cleanRunToRelax: Int = 5) extends FlowController {
  import LadderFlowController._

  private val floor = math.min(maxBatch, math.max(MinBatch, MinBatch * math.max(1, openShards)))
  private var level = 0
  private var cleanRun = 0

  def currentLevel: Int = level

  override def batchSize: Int = if (level == 0) maxBatch else math.max(floor, maxBatch >> level)

  override def delayMillis: Long =
    if (level == 0) 0 else math.min(MaxDelayMillis, MinDelayMillis << (level - 1))

  override def onResponse(records: Int, throttled: Int): Unit =
    if (throttled > 0) {
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
  val MinBatch = 10
  val MinDelayMillis = 100L
  val MaxDelayMillis = 10000L
  /** The first level whose pause reaches the 10 s cap: 100 ms * 2^7 = 12.8 s. */
  val MaxLevel = 8
}

/**
 * Additive increase, multiplicative decrease of the batch size (Flink's async sink: +10 per clean response,
 * x0.99 per throttled one), without a pause; kept for comparison with the ladder in the benchmarks.
 */
final class AimdFlowController(maxBatch: Int, increase: Int = 10, decrease: Double = 0.99) extends FlowController {
  private val lowest = math.min(maxBatch, LadderFlowController.MinBatch).toDouble
  private var size: Double = maxBatch

  override def batchSize: Int = size.toInt
  override def delayMillis: Long = 0

  override def onResponse(records: Int, throttled: Int): Unit =
    size = if (throttled > 0) math.max(lowest, size * decrease) else math.min(maxBatch.toDouble, size + increase)
}
