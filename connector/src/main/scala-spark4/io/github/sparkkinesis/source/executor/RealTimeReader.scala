package io.github.sparkkinesis.source
package executor

import java.util.concurrent.TimeUnit

import io.github.sparkkinesis.TaskIdleWork
import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

/**
 * Real-time mode: a long-running task emits its shards' records as the executor's feeds bring them ([[Prefetcher]],
 * polling or enhanced fan-out), until Spark ends the batch. Each shard's records come in sequence order; the
 * shards of a task take turns an answer at a time, so a busy shard does not hold a quiet one's records back.
 *
 * What a task emitted is dropped from the executor's buffer the next time it asks its feed for more (Spark has
 * processed those rows by then): a retried task finds the feed past its start and reads its shards again from
 * Kinesis, so it emits exactly what its first attempt did, and more.
 *
 * A shard read to its end hands over to its children in the same task when all of a child's parents are this
 * task's and read to their end (a split always; a merge when both parents are here), so a reshard does not hold a
 * hash range back for the rest of a long batch. Other children are read from the next batch, whose offset says
 * their parents are done: parent-before-child holds across tasks and executors without the tasks talking.
 */
final class RealTimeReader(partition: RealTimeInputPartition) extends SupportsRealTimeRead[InternalRow] {
  import RealTimeReader._

  private final class Cursor(val key: ShardKey, val from: ShardPosition, hashKeys: Option[HashKeySpan]) {
    val columns = SourceRow.shardColumns(partition.config, key)
    /** Everything up to here was emitted (the current block's emitted records not yet included). */
    var position: ShardPosition = from
    var feed: ShardFeed = _
    var pending: Iterator[RecordBlock] = Iterator.empty
    var block: RecordBlock = RecordBlock.empty
    var index = 0
    var records = 0L
    var bytes = 0L

    def done: Boolean = position == ShardEnd
    def hasRecord: Boolean = index < block.size
    def emitted: ShardPosition = if (index > 0) block.position(index - 1) else position

    /** Something new may be there: never asked, its feed was dropped, or it read past what was taken from it. */
    def mayHaveMore: Boolean =
      !done && (feed == null || feed.stopped || feed.hasRecordsAfter(position) || feed.finished)

    /** Moves to the next block taken, else asks the feed for what it brought since. Whether a record is ready. */
    def advance(): Boolean = {
      while (!hasRecord && pending.hasNext) { position = emitted; block = pending.next(); index = 0 }
      if (!hasRecord && mayHaveMore) {
        position = emitted
        block = RecordBlock.empty
        index = 0
        feed =
          Prefetcher.feedFor(partition.sourceId, partition.config, key, position, runEnd = None, spill = false, hashKeys)
        feed.failed.foreach(e => throw SnapshotJob.failure(key, e))
        val ended = feed.ended // read before the records: nothing is added to a feed after its end
        val taken = feed.heldAfter(position)
        if (taken.nonEmpty) { pending = taken.iterator; block = pending.next() }
        else if (ended) { position = ShardEnd; adoptChildren() }
      }
      hasRecord
    }

    def snapshot(location: String): ShardSnapshot = {
      val f = feed
      val state = FeedState(
        emitted,
        records,
        bytes,
        Option(f).flatMap(_.millisBehindLatest),
        caughtUp = done || Option(f).exists(_.caughtUp),
        Option(f).map(_.bytesHeld).getOrElse(0L))
      ShardSnapshot(key, from, state, location)
    }
  }

  private var cursors =
    partition.starts.map { case (key, from) => new Cursor(key, from, partition.hashKeys.get(key)) }.toArray
  private lazy val discovery = new ShardDiscovery(partition.config)
  private val out = new SourceRow(partition.config.layout)
  private val location = SnapshotJob.executorLocation()
  /** The cursor whose shard the row's stream and shard columns hold, and the one that emits next. */
  private var shown: Cursor = null
  private var turn = 0

  override def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long): RecordStatus = {
    val deadline =
      System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startTimeMs + timeoutMs - System.currentTimeMillis())
    var status: RecordStatus = null
    keepFeeds()
    while (status == null) {
      // Read before looking: a change after the look wakes the wait below.
      val seen = Prefetcher.changes(partition.sourceId)
      val c = nextReady()
      if (c != null) status = emit(c)
      else if (cursors.forall(_.done) || System.nanoTime() >= deadline) status = NoRecord
      else {
        keepFeeds()
        if (idleWork == null) idleWork = TaskIdleWork.current()
        // A Kinesis writer in this task sends while we wait (TaskIdleWork): woken often to let it.
        val slice = if (idleWork == null) KeepAliveNanos else IdleWorkNanos
        Prefetcher.await(partition.sourceId, math.min(deadline, System.nanoTime() + slice))(
          Prefetcher.changes(partition.sourceId) != seen)
        if (idleWork != null) idleWork.run()
      }
    }
    status
  }

  private var keptNanos = System.nanoTime()
  private var idleWork: Runnable = null

  /**
   * A quiet shard's feed is not asked for records (beside busy ones, or with the whole task waiting), and the
   * executor drops feeds nobody asks for ([[Prefetcher]]): marked as used now and then, it keeps its position and
   * its read-ahead through a long batch.
   */
  private def keepFeeds(): Unit = if (System.nanoTime() - keptNanos >= KeepAliveNanos) {
    cursors.foreach(c => if (!c.done) Prefetcher.get(partition.sourceId, c.key))
    keptNanos = System.nanoTime()
  }

  /** The cursor to emit from: the current one within its block, else the next in turn that has a record. */
  private def nextReady(): Cursor = {
    if (shown != null && shown.hasRecord) return shown
    var i = 0
    while (i < cursors.length) {
      val c = cursors((turn + i) % cursors.length)
      if (c.advance()) {
        turn = (turn + i + 1) % cursors.length
        return c
      }
      i += 1
    }
    null
  }

  /** The children whose parents are all this task's and ended start here, from their first record. */
  private def adoptChildren(): Unit = {
    discovery.invalidate() // listed before the parent ended, it would not show the children
    val mine = cursors.map(c => c.key -> c).toMap
    val children = discovery.shards().values.filter { m =>
      !mine.contains(m.key) && m.parents.nonEmpty && m.parents.forall(p =>
        mine.get(ShardKey(m.key.stream, p)).exists(_.done))
    }
    cursors = cursors ++ children.toSeq.sortBy(_.key).map(m => new Cursor(m.key, TrimHorizon, Some(m.hashKeys)))
  }

  private def emit(c: Cursor): RecordStatus = {
    if (c ne shown) { out.shard(c.columns); shown = c }
    val i = c.index
    out.record(c.block, i)
    c.index += 1
    c.records += 1
    c.bytes += c.block.recordBytes(i)
    RecordStatus.newStatusWithArrivalTimeMs(c.block.arrivalMillis(i))
  }

  override def next(): Boolean =
    throw new UnsupportedOperationException("a real-time Kinesis partition is read with nextWithTimeout")

  override def get(): InternalRow = out.row

  override def getOffset(): PartitionOffset = RealTimePartitionOffset(cursors.toSeq.map(_.snapshot(location)))

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    SourceTaskMetrics.values(out.records, out.bytes, 0L, out.malformedAggregates)

  /** The feeds keep reading: the next batch's task for these shards finds their records here. */
  override def close(): Unit = ()
}

object RealTimeReader {
  private val NoRecord = RecordStatus.newStatusWithoutArrivalTime(false)
  /** Well inside the executor's floor for dropping unused feeds (`Prefetcher.AbandonedFloor`). */
  private val KeepAliveNanos = java.time.Duration.ofSeconds(5).toNanos
  /** How often a waiting task lends its thread to its Kinesis writer: what a queued row may wait for a free slot. */
  private val IdleWorkNanos = java.time.Duration.ofMillis(10).toNanos
}
