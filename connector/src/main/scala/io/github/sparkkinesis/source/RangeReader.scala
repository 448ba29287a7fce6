package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.KinesisClientFactory
import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging

/**
 * The records of one planned shard range: from the executor's prefetch buffer when the snapshot that planned
 * them ran here, otherwise (executor lost, task moved, buffer evicted, or a batch read whose buffer filled up) read
 * again from Kinesis. Both give the same records because both ends of the range are concrete.
 */
object RangeReader extends Logging {

  /** The range's records, and whether some of them had to be re-read from Kinesis. */
  def read(sourceId: String, config: SourceConfig, range: ShardRange): (Iterator[UserRecord], Boolean) = {
    val feed = Prefetcher.get(sourceId, range.key)
    val part = feed.flatMap(_.part(range.from, range.to))
    // A batch read (spill) reads its range once and has no commit to free it: free it now.
    if (feed.exists(_.spill)) Prefetcher.drop(sourceId, range.key)
    part match {
      case Some(BufferedPart(records, None)) => (records.iterator, false)
      case Some(BufferedPart(records, Some(resume))) =>
        Prefetcher.countReRead(sourceId)
        (records.iterator ++ fromKinesis(config, range.copy(from = resume)), true)
      case None =>
        Prefetcher.countReRead(sourceId)
        (fromKinesis(config, range), true)
    }
  }

  /** Re-reads (from, to] with GetRecords. Stops at `to`, or at the shard's end when `to` is ShardEnd. */
  private def fromKinesis(config: SourceConfig, range: ShardRange): Iterator[UserRecord] = {
    logInfo(s"Reading ${range.key} ${range.from} .. ${range.to} from Kinesis (not buffered on this executor)")
    val reader = new ShardReader(KinesisClientFactory.sync(config.connection), config, range.key, range.from)
    new Iterator[UserRecord] {
      private var pending: Iterator[UserRecord] = Iterator.empty
      private var done = false

      override def hasNext: Boolean = {
        while (!pending.hasNext && !done) refill()
        pending.hasNext
      }

      override def next(): UserRecord = {
        if (!hasNext) throw new NoSuchElementException
        pending.next()
      }

      private def refill(): Unit = {
        val poll = reader.poll(config.maxRecordsPerFetch)
        val inRange = poll.records.takeWhile(r => ShardRange.reaches(range.to, r))
        pending = inRange.iterator
        val reachedEnd = range.to match {
          case t: After => inRange.lastOption.exists(_.position == t) ||
            inRange.size < poll.records.size
          case _ => false
        }
        if (reachedEnd || poll.ended) done = true
        else if (poll.records.isEmpty && poll.millisBehindLatest == 0) {
          // At the tip without having reached a position a fetch read before: those records are gone.
          val what = s"Kinesis shard ${range.key}: records up to ${range.to} were read before but are no longer in " +
            s"the stream (expired or the stream was recreated); reading from ${range.from}"
          if (config.failOnDataLoss) {
            throw new IllegalStateException(s"$what. Set failOnDataLoss=false to go on without them.")
          }
          logWarning(s"$what. failOnDataLoss=false: the batch goes on without them.")
          done = true
        }
      }
    }
  }
}
