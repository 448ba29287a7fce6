package io.github.sparkkinesis.source
package executor

import java.util.concurrent.{ExecutorService, Executors, ThreadFactory}

import scala.util.control.NonFatal

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging

/**
 * The ranges of a batch read planned without reading ([[KinesisInputPartition.oneRead]]): each read once from
 * Kinesis, all at once on threads of the task's own, each at its shard's read quota (a paced [[ShardReader]]),
 * and handed out in the partition's order (parents before children). What is read ahead of the range being handed
 * out waits for room in `fetchBufferSize` (per executor, all tasks together); the range being handed out never
 * waits for it (a few calls at most), so a task always moves on. Both ends of every range are concrete: a retried
 * task reads the same records in the same order.
 */
final class RangeFetch(config: SourceConfig, ranges: Seq[ShardRange]) extends AutoCloseable with Logging {
  import RangeFetch._

  private val slots = ranges.map(new Slot(_)).toVector
  private val pool: ExecutorService = Executors.newFixedThreadPool(math.max(1, math.min(ranges.size, Threads)), daemon)
  // In order: the range handed out first has a thread first, whatever the ones after it wait for.
  slots.foreach(s => pool.execute(() => s.run()))

  /** Range `i`'s records, as they come; from now on it is the range being handed out. */
  def blocks(i: Int): Iterator[RecordBlock] = slots(i)

  override def close(): Unit = {
    Lock.synchronized {
      slots.foreach(_.discard())
      Lock.notifyAll()
    }
    pool.shutdownNow()
  }

  private final class Slot(range: ShardRange) extends Iterator[RecordBlock] {
    private val queue = new java.util.ArrayDeque[RecordBlock]()
    private var handedOut, done, closed = false
    private var failure: Throwable = _

    def run(): Unit = {
      val outcome =
        try { read(config, range, put); None }
        catch {
          case _: InterruptedException => None
          case NonFatal(e) => Some(e)
        }
      Lock.synchronized {
        failure = outcome.orNull
        done = true
        Lock.notifyAll()
      }
    }

    private def put(block: RecordBlock): Unit = Lock.synchronized {
      val bytes = block.heapBytes(0, block.size)
      // A range read ahead waits for the executor's buffer only. A count of blocks as a second bound stopped each
      // range of a 16 x 32 MiB read at ~15 MiB, and the rest was read once handed out, one range per task at a
      // time: a quarter of the shards' quota.
      def room = if (handedOut) queue.size < MaxQueued else held + bytes <= bufferLimit(config)
      while (!closed && !room) Lock.wait()
      if (closed) throw new InterruptedException
      queue.add(block)
      held += bytes
      Lock.notifyAll()
    }

    override def hasNext: Boolean = Lock.synchronized {
      if (!handedOut) { handedOut = true; Lock.notifyAll() }
      while (queue.isEmpty && !done && !closed) Lock.wait()
      if (failure != null) throw failure
      !queue.isEmpty
    }

    override def next(): RecordBlock = Lock.synchronized {
      if (!hasNext) throw new NoSuchElementException
      val block = queue.poll()
      held -= block.heapBytes(0, block.size)
      Lock.notifyAll()
      block
    }

    def discard(): Unit = {
      closed = true
      queue.forEach(b => held -= b.heapBytes(0, b.size))
      queue.clear()
    }
  }
}

object RangeFetch extends Logging {
  /** Ranges one task reads at once: each mostly waits out its shard's quota, so threads are cheap next to calls. */
  val Threads = 64
  /** Blocks the range being handed out holds at most (each about a second of its shard's quota). */
  val MaxQueued = 8
  /** The first call's Limit; later ones aim at [[ShardReader.callTargetBytes]] from the records' sizes seen. */
  val FirstLimit = 100

  /** Guards every range's queue and `held`: a few operations per call, a call per shard and second. */
  private object Lock
  /** Bytes read ahead in this JVM by one-read batch tasks. */
  private var held = 0L

  private def bufferLimit(config: SourceConfig): Long = Prefetcher.bufferLimit(config)

  private val daemon: ThreadFactory = { r: Runnable =>
    val t = new Thread(r, "kinesis-batch-range")
    t.setDaemon(true)
    t
  }

  /** Reads `range` with GetRecords at its shard's quota, giving `emit` its records in order, then stops. */
  def read(config: SourceConfig, range: ShardRange, emit: RecordBlock => Unit): Unit = {
    val reader = ShardReader.of(config, range)
    var limit = math.min(config.maxRecordsPerFetch, FirstLimit)
    var done = false
    while (!done) {
      val poll = reader.poll(limit)
      val kept = inRange(poll.records, range)
      if (kept > 0) emit(poll.records.take(kept))
      if (poll.records.size > 0) {
        val perRecord = math.max(1L, poll.bytes / poll.records.size)
        limit = math.max(1L, math.min(config.maxRecordsPerFetch.toLong, ShardReader.callTargetBytes(config) / perRecord))
          .toInt
      }
      val metEnd = kept < poll.records.size
      // The probed record was in the shard: reaching the tip or the end without meeting it means it is gone.
      if (!metEnd && (poll.ended || poll.atTip) && range.before.nonEmpty) lost(config, range)
      done = metEnd || poll.ended || (poll.atTip && (range.arrivedBy.nonEmpty || range.before.nonEmpty))
    }
  }

  private def lost(config: SourceConfig, range: ShardRange): Unit = DataLoss(
    config,
    range.key,
    s"the planned range ${DataLoss.show(range.from)} up to sequence number ${range.before.getOrElse("")} (not " +
      "included) no longer reaches its end: the read reached the end of what the shard holds without it; its " +
      "records expired past the stream's retention, or the stream was deleted and created again",
    "with the records of the range that are left"
  )

  /** How many leading records of `block` are in `range`: up to `to`, before `before`, arrived by `arrivedBy`. */
  def inRange(block: RecordBlock, range: ShardRange): Int = {
    var n = block.countReaching(range.to)
    range.before.foreach(seq => n = math.min(n, block.countAtOrBefore(After(seq, -1L))))
    range.arrivedBy.foreach { t =>
      var i = 0
      while (i < n && block.arrivalMillis(i) <= t) i += 1
      n = i
    }
    n
  }
}
