package io.github.sparkkinesis.source
package executor

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging

/**
 * The records of one planned shard range: from the executor's prefetch buffer when the snapshot that planned
 * them ran here, otherwise (executor lost, task moved, buffer evicted, or a batch read whose buffer filled up) read
 * again from Kinesis. Both give the same records because both ends of the range are concrete.
 */
object RangeReader extends Logging {

  /** The range's records, and whether some of them had to be re-read from Kinesis. */
  def read(sourceId: String, config: SourceConfig, range: ShardRange): (Iterator[RecordBlock], Boolean) = {
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
  private def fromKinesis(config: SourceConfig, range: ShardRange): Iterator[RecordBlock] = {
    logInfo(s"Reading ${range.key} ${range.from} .. ${range.to} from Kinesis (not buffered on this executor)")
    val reader = ShardReader.of(config, range)
    new Iterator[RecordBlock] {
      private var pending: Option[RecordBlock] = None
      private var done = false

      override def hasNext: Boolean = {
        while (pending.isEmpty && !done) refill()
        pending.nonEmpty
      }

      override def next(): RecordBlock = {
        if (!hasNext) throw new NoSuchElementException
        val block = pending.get
        pending = None
        block
      }

      private def refill(): Unit = {
        val poll = reader.poll(config.maxRecordsPerFetch)
        val inRange = poll.records.take(poll.records.countReaching(range.to))
        if (!inRange.isEmpty) pending = Some(inRange)
        range.to match {
          case end: After =>
            // The planned end is a record a fetch returned: a re-read must meet it exactly. Passing it, or finding
            // nothing more (the tip, the shard's end), means it is no longer in the shard.
            if (inRange.lastPosition.contains(end) || (!range.toIsRecord && inRange.size < poll.records.size))
              done = true
            else if (inRange.size < poll.records.size || poll.ended || (poll.records.isEmpty && poll.atTip)) {
              val met = if (inRange.size < poll.records.size) {
                s"the re-read found sequence number ${poll.records.sequenceNumber(inRange.size)} past it"
              } else "the re-read reached the end of what the shard holds"
              DataLoss(
                config,
                range.key,
                s"the planned range ${DataLoss.show(range.from)} up to sequence number " +
                  s"${end.sequenceNumber} (sub-record ${end.subSequenceNumber}) no longer reaches its end: $met; its " +
                  "records expired past the stream's retention, or the stream was deleted and created again",
                "with the records of the range that are left"
              )
              done = true
            }
          case _ => done = poll.ended
        }
      }
    }
  }
}
