package io.github.sparkkinesis.source

import java.time.Instant
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/** What one GetRecords call gave. `ended`: the shard is closed and nothing follows these records. */
final case class Poll(records: Seq[UserRecord], bytes: Long, millisBehindLatest: Long, ended: Boolean)

/**
 * Reads one shard forward from a position with GetRecords, within the shard's quotas: at most one call per
 * `minFetchPeriod`, and calls spaced so the bytes read stay under the shard's read quota (or `maxFetchRate`). Throttling
 * and server errors are retried by the SDK's retry strategy (ClientFactory); an expired iterator is renewed from
 * the last record read. Not thread-safe: one reader belongs to one task at a time.
 */
final class ShardReader(client: KinesisClient, config: SourceConfig, val key: ShardKey, start: ShardPosition)
  extends Logging {

  private var position: ShardPosition = start
  private var iterator: Option[String] = None
  private var ended: Boolean = start == ShardEnd
  private var nextCallNanos: Long = System.nanoTime()

  /** Position after the last record this reader returned. */
  def current: ShardPosition = position
  def isEnded: Boolean = ended

  /**
   * Forgets what was read past `p` (records the caller could not take): the next call resumes after `p`. Pacing is
   * kept, so the shard's call rate still holds.
   */
  def rewindTo(p: ShardPosition): Unit = {
    position = p
    iterator = None
    ended = p == ShardEnd
  }

  /** Nanoseconds until the next call is allowed (0 = now). */
  def waitNanos: Long = math.max(0L, nextCallNanos - System.nanoTime())

  /** One GetRecords call of at most `limit` records, waiting first if the shard's pacing requires it. */
  def poll(limit: Int): Poll = {
    if (ended) return Poll(Nil, 0, 0, ended = true)
    val wait = waitNanos
    if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait)
    val it = iterator.getOrElse(newIterator())
    val response = try {
      client.getRecords(GetRecordsRequest.builder().shardIterator(it).limit(math.max(1, math.min(limit, 10000))).build())
    } catch {
      case _: ExpiredIteratorException =>
        logInfo(s"Shard iterator of $key expired; renewing it from $position")
        iterator = None
        client.getRecords(GetRecordsRequest.builder().shardIterator(newIterator()).limit(math.max(1, math.min(limit, 10000))).build())
    }
    val out = Vector.newBuilder[UserRecord]
    var bytes = 0L
    for (r <- response.records().asScala) {
      val data = r.data().asByteArrayUnsafe()
      bytes += data.length + r.partitionKey().length
      val arrival = r.approximateArrivalTimestamp().toEpochMilli
      // A resume AT a sequence number returns records already read: skip them (inside an aggregate, too).
      if (KplDeaggregator.isAggregated(data)) {
        KplDeaggregator.split(key, r.sequenceNumber(), arrival, data).foreach { u =>
          if (SequenceNumbers.isAfter(position, u.sequenceNumber, u.subSequenceNumber)) out += u
        }
      } else if (SequenceNumbers.isAfter(position, r.sequenceNumber(), 0L)) {
        out += UserRecord(r.partitionKey(), data, r.sequenceNumber(), 0L, arrival)
      }
    }
    val records = out.result()
    records.lastOption.foreach(last => position = last.position)
    iterator = Option(response.nextShardIterator())
    if (iterator.isEmpty) {
      ended = true
      position = ShardEnd
    }
    nextCallNanos = System.nanoTime() + pacingNanos(bytes)
    Poll(records, bytes, Option(response.millisBehindLatest()).map(_.longValue).getOrElse(0L), ended)
  }

  /**
   * A call may return up to 10 MiB, five seconds of a shard's 2 MiB/s read quota: Kinesis serves it and refuses
   * the shard's calls until the debt is paid. Waiting out the debt here, instead of calling into it, keeps every
   * call unthrottled and the rate at the quota.
   */
  private def pacingNanos(bytes: Long): Long = {
    val bytesPerSecond = config.maxFetchRateMBps.map(_ * 1000 * 1000).getOrElse(ShardReader.ReadQuotaBytesPerSecond)
    math.max(config.minFetchPeriod.toNanos, (bytes / bytesPerSecond * 1e9).toLong)
  }

  private def newIterator(): String = {
    val request = GetShardIteratorRequest.builder().streamName(key.stream).shardId(key.shardId)
    position match {
      case After(seq, Long.MaxValue) =>
        request.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).startingSequenceNumber(seq)
      case After(seq, _) =>
        // Sub-records of `seq` may remain; `poll` drops the ones already read.
        request.shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).startingSequenceNumber(seq)
      case AtTimestamp(ms) => request.shardIteratorType(ShardIteratorType.AT_TIMESTAMP).timestamp(Instant.ofEpochMilli(ms))
      case TrimHorizon => request.shardIteratorType(ShardIteratorType.TRIM_HORIZON)
      case ShardEnd => throw new IllegalStateException(s"$key is already read to its end")
    }
    val it = try client.getShardIterator(request.build()).shardIterator() catch {
      case e: InvalidArgumentException if position.isInstanceOf[After] => lostPosition(e)
      case e: ResourceNotFoundException if position.isInstanceOf[After] => lostPosition(e)
    }
    iterator = Some(it)
    it
  }

  /** The checkpointed position no longer exists: trimmed past retention, or the stream was recreated. */
  private def lostPosition(e: KinesisException): String = {
    val what = s"Kinesis shard $key: position $position can no longer be read (${e.awsErrorDetails().errorMessage()}); " +
      "its records expired past the stream's retention or the stream was recreated"
    if (config.failOnDataLoss) {
      throw new IllegalStateException(s"$what. Set failOnDataLoss=false to go on from the oldest record instead.", e)
    }
    logWarning(s"$what. failOnDataLoss=false: going on from the oldest record of the shard.")
    position = TrimHorizon
    client.getShardIterator(GetShardIteratorRequest.builder().streamName(key.stream).shardId(key.shardId)
      .shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
  }
}

object ShardReader {
  /** AWS's read quota per shard (shared by every consumer of the shard that does not use enhanced fan-out). */
  val ReadQuotaBytesPerSecond: Double = 2.0 * 1024 * 1024
}
