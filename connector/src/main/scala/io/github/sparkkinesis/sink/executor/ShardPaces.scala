package io.github.sparkkinesis.sink
package executor

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import io.github.sparkkinesis.client.ConnectionConfig

/**
 * The paces of one stream's shards, shared by the writer tasks of one JVM. An executor runs several tasks of a
 * write at once, all sending to the same shards; pacing a shard once per task left each task to find its share
 * of the shard by itself, and they did not: the task that lost the race for a shard's first burst measured little
 * and was paced from almost nothing (a 50 KiB aggregate then waits tens of seconds for its turn), and tasks that
 * grow and cut in proportion to their rates keep whatever split they fell into, so the task with the larger share
 * finishes first and the other takes seconds to grow into the freed quota. One pace per shard, whose turns go to
 * whichever task has records for it, has none of this: the tasks of one executor are one writer to the shard.
 * Writers in other JVMs pace the shard apart: when the driver knows several executors write at once, each pace
 * starts at this executor's share of the quota (`writerShare`, see [[driver.WriterShare]]).
 */
final class ShardPaces(newFlow: Option[Double] => FlowController) {
  def this(newFlow: () => FlowController) = this((_: Option[Double]) => newFlow())

  private val byShard = new ConcurrentHashMap[String, ShardPace]()
  private val pacing = new AtomicInteger()
  @volatile private var writerShare: Option[Double] = None

  def apply(shardId: String, startNanos: Long): ShardPace =
    byShard.computeIfAbsent(shardId, _ => new ShardPace(() => newFlow(writerShare), startNanos, pacing))

  /** The share of each shard's quota the paces made from now on start at (the latest write's). */
  def startingAt(share: Option[Double]): ShardPaces = {
    writerShare = share
    this
  }

  /** Shards of the stream paced now. */
  def pacedCount: Int = pacing.get

  /**
   * A writer starts: shards none of the JVM's writers has sent to for [[ShardPaces.IdleNanos]] start unpaced
   * again, as each task's shards did before their paces were shared. A micro-batch a second keeps its paces (its
   * tasks no longer meet the shards with an unpaced burst each), a stream quiet for a while is not held to an
   * old episode's rate, nor its unpaced records to the gathering that pacing brings.
   */
  def forgetIdle(now: Long): ShardPaces = {
    byShard.values.forEach(_.forgetIfIdle(now, ShardPaces.IdleNanos))
    this
  }
}

object ShardPaces {
  private val shared = new ConcurrentHashMap[(ConnectionConfig, String, Int), ShardPaces]()

  /**
   * The JVM's paces of a stream's shards, for writers sending up to `maxRecords` per request; those made from now
   * on start at `writerShare` of the quota.
   */
  def of(
      connection: ConnectionConfig,
      stream: String,
      maxRecords: Int,
      writerShare: Option[Double],
      now: Long): ShardPaces =
    shared.computeIfAbsent(
      (connection, stream, maxRecords),
      _ => new ShardPaces((share: Option[Double]) => RateFlowController(maxRecords, 1, share)))
      .startingAt(writerShare)
      .forgetIdle(now)

  val IdleNanos: Long = 10L * 1000 * 1000 * 1000
}

/**
 * One shard's (or one writer's whole stream's) flow controller and the time of its next turn. Writer threads
 * share it, so every read and change holds its lock: once per response, and per request while the shard is paced
 * (uncontended but for the moments two tasks answer or send together).
 */
final class ShardPace(newFlow: () => FlowController, startNanos: Long, pacedShards: AtomicInteger) {
  def this(flow: FlowController, startNanos: Long, pacedShards: AtomicInteger) =
    this(() => flow, startNanos, pacedShards)

  private var flow = newFlow()
  // A pace may start paced (at a share of the quota): it counts as paced from its start.
  if (flow.pacing) pacedShards.incrementAndGet()
  private var nextAt = startNanos
  private var usedAt = startNanos
  // The last turn: when its pause began and the units it carried, to shorten the wait when the rate rises.
  private var pauseFrom = startNanos
  private var pauseUnits = 0.0
  // Whose turn it was last, and another writer that found the shard waiting since: turns alternate between the
  // writers that have records for the shard. Left to whoever looks first, one task took nearly every turn while
  // the other's buffer filled with the shard's records and held back its records for every other shard.
  private var lastTaker: AnyRef = null
  private var waiter: AnyRef = null

  def pacing: Boolean = synchronized(flow.pacing)
  def nextAtNanos: Long = synchronized(nextAt)

  /**
   * When `writer` may take the shard's next turn: `now` when it may now. The writer that took the last turn
   * leaves a turn that has just come to another writer waiting for it, for up to [[ShardPace.YieldNanos]].
   */
  def turnAt(writer: AnyRef, now: Long): Long = synchronized {
    if (now - nextAt < 0) {
      if (writer ne lastTaker) waiter = writer
      nextAt
    } else if ((writer eq lastTaker) && waiter != null && now - (nextAt + ShardPace.YieldNanos) < 0)
      nextAt + ShardPace.YieldNanos
    else now
  }
  def batchSize: Int = synchronized(flow.batchSize)
  def batchUnits: Double = synchronized(flow.batchUnits)

  /**
   * A request carries `units` for this shard now: its next turn is a pause later. A send that comes a little late
   * keeps to the schedule, but an idle spell is not banked for a burst. Returns the pause.
   */
  def schedule(writer: AnyRef, units: Double, now: Long): Long = synchronized {
    // Whoever waited before this turn has had it, or did not come for it: the next turn's waiters ask again.
    lastTaker = writer
    waiter = null
    usedAt = now
    val pause = flow.pauseNanos(units)
    pauseFrom = if (nextAt - (now - pause) > 0) nextAt else now
    pauseUnits = units
    nextAt = pauseFrom + pause
    pause
  }

  def onResponse(response: FlowController.Response): Unit = synchronized {
    usedAt = response.nowNanos
    val was = flow.pacing
    flow.onResponse(response)
    if (flow.pacing != was) pacedShards.addAndGet(if (was) -1 else 1)
    // A pace that rose shortens the wait already set: set at a rate of almost nothing, it could last a minute.
    if (flow.pacing && pauseUnits > 0) {
      val sooner = pauseFrom + flow.pauseNanos(pauseUnits)
      if (sooner - nextAt < 0) nextAt = sooner
    }
  }

  /** A fresh controller (unpaced, or at its starting share) when no writer has sent or heard back for `idleNanos`. */
  def forgetIfIdle(now: Long, idleNanos: Long): Unit = synchronized {
    if (now - usedAt >= idleNanos && flow.pacing) {
      flow = newFlow()
      if (!flow.pacing) pacedShards.decrementAndGet()
      lastTaker = null
      waiter = null
    }
  }

  /** Write units per second while paced by the rate controller. */
  def unitsPerSecond: Option[Double] = synchronized {
    flow match {
      case r: RateFlowController if r.pacing => Some(r.unitsPerSecond)
      case _ => None
    }
  }
}

object ShardPace {
  /** How long the last taker leaves a turn to another writer that waited for it (a thread's wake-up, loaded). */
  val YieldNanos: Long = 10L * 1000 * 1000
}
