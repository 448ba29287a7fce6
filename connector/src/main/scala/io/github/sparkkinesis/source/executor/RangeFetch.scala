package io.github.sparkkinesis.source
package executor

import scala.util.control.NonFatal

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging

/**
 * The ranges of a batch read planned without reading ([[KinesisInputPartition.oneRead]]): each read once from
 * Kinesis on a thread of its own, at its shard's read quota (a paced [[ShardReader]]): the ranges taking turns
 * ([[RangeTurns]]) always, and the ones after them ahead, in the partition's order, up to [[RangeFetch.Threads]]
 * ranges at once. What is read waits for room in `fetchBufferSize` (per executor, all tasks together), except a
 * block of a range taking turns whose queue is empty: so every range taking turns moves on. Both ends of every
 * range are concrete: a retried task reads the same records in the same order.
 */
final class RangeFetch(config: SourceConfig, ranges: Seq[ShardRange]) extends AutoCloseable with Logging {
  import RangeFetch._

  private val slots = ranges.map(new Slot(_)).toVector
  /** Ranges being read (guarded by Lock). */
  private var reading = 0
  private var closed = false
  Lock.synchronized(readAhead())

  /** Range `i`'s records, as they come; from now on it takes turns, read whatever else is. */
  def blocks(i: Int): Iterator[RecordBlock] = {
    Lock.synchronized(slots(i).start())
    slots(i)
  }

  override def close(): Unit = {
    Lock.synchronized {
      closed = true
      slots.foreach(_.discard())
      Lock.notifyAll()
    }
  }

  /** Starts reading the next ranges in order while fewer than `Threads` are read. */
  private def readAhead(): Unit = slots.iterator.filterNot(_.started).take(Threads - reading).foreach(_.start())

  private final class Slot(range: ShardRange) extends Iterator[RecordBlock] {
    private val queue = new java.util.ArrayDeque[RecordBlock]()
    private var handedOut, done = false
    var started = false
    private var thread: Thread = _
    private var failure: Throwable = _

    def start(): Unit = if (!started && !closed) {
      started = true
      reading += 1
      thread = new Thread(() => run(), "kinesis-batch-range")
      thread.setDaemon(true)
      thread.start()
    }

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
        reading -= 1
        readAhead()
        Lock.notifyAll()
      }
    }

    private def put(block: RecordBlock): Unit = Lock.synchronized {
      val bytes = block.heapBytes(0, block.size)
      // A range read ahead waits for the executor's buffer only (a count of blocks as a second bound stopped each
      // range of a 16 x 32 MiB read at ~15 MiB: a quarter of the shards' quota). One taking turns may always hold
      // a block, so the task never waits on a range that cannot read.
      def fits = held + bytes <= bufferLimit(config)
      def room = if (handedOut) queue.isEmpty || (queue.size < MaxQueued && fits) else fits
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
      queue.forEach(b => held -= b.heapBytes(0, b.size))
      queue.clear()
      if (thread != null) thread.interrupt()
    }
  }
}

object RangeFetch extends Logging {
  /** Ranges one task reads ahead at once, and takes turns from: each mostly waits out its shard's quota, so threads
    * are cheap next to calls. */
  val Threads = 64
  /** Blocks a range taking turns holds at most (each about a second of its shard's quota). */
  val MaxQueued = 8
  /** Records a task takes from one range before the next range's turn ([[RangeTurns]]). */
  val TurnRecords = 1000
  /** The first call's Limit; later ones aim at [[ShardReader.callTargetBytes]] from the records' sizes seen. */
  val FirstLimit = 100

  /** Guards every range's queue and `held`: a few operations per call, a call per shard and second. */
  private object Lock
  /** Bytes read ahead in this JVM by one-read batch tasks. */
  private var held = 0L

  private def bufferLimit(config: SourceConfig): Long = Prefetcher.bufferLimit(config)

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
