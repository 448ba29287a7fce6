package io.github.sparkkinesis.source
package executor

import java.time.Instant
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.client.{CallTally, KinesisClientFactory, RetryBackoff, SdkCallStats}
import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * What one GetRecords call gave. `ended`: the shard is closed and nothing follows these records. `filled`: the
 * answer holds as many Kinesis records as the call's Limit asked for, so more may follow at once. `aggregates`: KPL
 * aggregates skipped because they hold user records of another shard's hash keys, and malformed ones read whole
 * ([[KplDeaggregator]]).
 */
final case class Poll(
    records: RecordBlock,
    bytes: Long,
    millisBehindLatest: Long,
    ended: Boolean,
    filled: Boolean = false,
    aggregates: AggregateCounts = AggregateCounts.zero) {
  /**
   * Nothing more to read now. MillisBehindLatest counts whole milliseconds (kinesis-mock: from the answer's last
   * record to the shard's newest), so an answer a Limit cut short inside records that arrived in one millisecond
   * (one PutRecords request) reads 0 with more to come; an AvailableNow query took it for the tip and ended.
   */
  def atTip: Boolean = millisBehindLatest == 0 && !filled
}

/**
 * Reads one shard forward from a position with blocking GetRecords calls. A batch task re-reading a planned range
 * whose records are not buffered on its executor uses one directly (`paced`: it waits for the shard's read quota
 * itself); the prefetcher's [[PollingFetcher]] runs one on its fetch threads and spaces the calls itself. Not
 * thread-safe: one call at a time, each seeing the previous one's state (a task, or calls chained by futures).
 *
 * @param tally where the SDK's call counter ([[SdkCallStats]]) adds this reader's calls, if anywhere
 * @param hashKeys the shard's hash key range, when known: KPL aggregates holding records outside it are skipped
 */
final class ShardReader(
    client: KinesisClient,
    config: SourceConfig,
    val key: ShardKey,
    start: ShardPosition,
    tally: Option[CallTally] = None,
    paced: Boolean = true,
    hashKeys: Option[HashKeySpan] = None) extends Logging {

  private var position: ShardPosition = start
  private var iterator: Option[String] = None
  /** Set on each new iterator: the record Kinesis must return first (see [[ShardReader.checkResumed]]). */
  private var resumeRecord: Option[String] = None
  private var ended: Boolean = start == ShardEnd
  private var nextCallNanos: Long = System.nanoTime()
  private lazy val retryBackoff = new RetryBackoff(config.connection.retry)

  /** One GetRecords call of at most `limit` records, waiting first if `paced` and the shard's quota requires it. */
  def poll(limit: Int): Poll = {
    if (ended) return Poll(RecordBlock.empty, 0, 0, ended = true)
    val wait = nextCallNanos - System.nanoTime()
    if (paced && wait > 0) TimeUnit.NANOSECONDS.sleep(wait)
    val started = System.nanoTime()
    var response: GetRecordsResponse = null
    var expired = 0
    while (response == null) {
      try response =
          client.getRecords(counted(ShardReader.getRecords(currentIterator(), limit, config.streamArn(key.stream))))
      catch {
        // An iterator lives 5 minutes: renewed at once from where reading stands. One that expires again at once
        // is Kinesis having trouble (seen under fault storms), retried as throttling is, per the retry options.
        case e: ExpiredIteratorException =>
          expired += 1
          iterator = None
          if (retryBackoff.exhausted(expired)) throw e
          logInfo(s"Shard iterator of $key expired; renewing it from $position (expiry $expired in a row)")
          if (expired > 1) TimeUnit.MILLISECONDS.sleep(retryBackoff.delayBefore(expired).toMillis)
      }
    }
    resumeRecord = resumeRecord.flatMap(ShardReader.checkResumed(config, key, position, _, response))
    val poll = ShardReader.decode(key, position, response, limit, hashKeys)
    poll.records.lastPosition.foreach(position = _)
    iterator = Option(response.nextShardIterator())
    if (poll.ended) {
      ended = true
      position = ShardEnd
    }
    nextCallNanos = started + ShardReader.pacingNanos(config, poll.bytes)
    poll
  }

  private def currentIterator(): String = iterator.getOrElse {
    val it =
      try client.getShardIterator(counted(ShardReader.iteratorRequest(config, key, position))).shardIterator()
      catch {
        case e: KinesisException if ShardReader.isLostPosition(position, e) =>
          position = ShardReader.lostPosition(config, key, position, e) // throws under failOnDataLoss
          client.getShardIterator(counted(ShardReader.iteratorRequest(config, key, position))).shardIterator()
      }
    iterator = Some(it)
    resumeRecord = ShardReader.resumeRecord(position)
    it
  }

  private def counted[R <: KinesisRequest](request: R): R = tally match {
    case None => request
    case Some(t) => request.toBuilder.overrideConfiguration(SdkCallStats.countedBy(t)).build().asInstanceOf[R]
  }
}

/** What the blocking and the async readers share: requests, decoding, pacing and the loss rule. */
object ShardReader {
  /** A paced reader of a batch's planned `range`, from its start. */
  def of(config: SourceConfig, range: ShardRange): ShardReader =
    new ShardReader(
      KinesisClientFactory.sync(config.connection),
      config,
      range.key,
      range.from,
      hashKeys = range.hashKeys)

  /** AWS's read quota per shard (shared by every consumer of the shard that does not use enhanced fan-out). */
  val ReadQuotaBytesPerSecond: Double = 2.0 * 1024 * 1024

  /**
   * With `streamARN` given, the call names its stream by ARN as GetShardIterator did: a read of another account's
   * stream through its resource policy is authorized against the ARN the request carries.
   */
  def getRecords(iterator: String, limit: Int, streamArn: Option[String] = None): GetRecordsRequest = {
    val request = GetRecordsRequest.builder().shardIterator(iterator).limit(callLimit(limit))
    streamArn.foreach(request.streamARN)
    request.build()
  }

  /** The Limit a call sends: Kinesis takes 1 to 10,000. */
  def callLimit(limit: Int): Int = math.max(1, math.min(limit, 10000))

  def iteratorRequest(config: SourceConfig, key: ShardKey, position: ShardPosition): GetShardIteratorRequest = {
    val start = startOf(key, position)
    val request = GetShardIteratorRequest.builder().shardId(key.shardId).shardIteratorType(start.kind)
    config.streamArn(key.stream).fold(request.streamName(key.stream))(request.streamARN)
    start.sequenceNumber.foreach(request.startingSequenceNumber)
    start.timestamp.foreach(request.timestamp)
    request.build()
  }

  /** Where a read from `position` starts, for GetShardIterator and SubscribeToShard alike. */
  final case class Start(kind: ShardIteratorType, sequenceNumber: Option[String], timestamp: Option[Instant])

  def startOf(key: ShardKey, position: ShardPosition): Start = position match {
    case After(seq, Long.MaxValue) => Start(ShardIteratorType.AFTER_SEQUENCE_NUMBER, Some(seq), None)
    // Sub-records of `seq` may remain; decoding drops the ones already read.
    case After(seq, _) => Start(ShardIteratorType.AT_SEQUENCE_NUMBER, Some(seq), None)
    case AtTimestamp(ms) => Start(ShardIteratorType.AT_TIMESTAMP, None, Some(Instant.ofEpochMilli(ms)))
    case TrimHorizon => Start(ShardIteratorType.TRIM_HORIZON, None, None)
    case ShardEnd => throw new IllegalStateException(s"$key is already read to its end")
  }

  /**
   * The user records of a response that come after `position` (a resume AT a sequence number returns records
   * already read, inside an aggregate too), KPL aggregates split; bytes count data and partition keys as served.
   * `limit`: the call's, to tell an answer it cut short ([[Poll.filled]]). `hashKeys`: the shard's range, when
   * known, for aggregates a split misplaced ([[KplDeaggregator]]).
   */
  def decode(
      key: ShardKey,
      position: ShardPosition,
      response: GetRecordsResponse,
      limit: Int,
      hashKeys: Option[HashKeySpan] = None): Poll =
    decode(
      key,
      position,
      response.records(),
      response.millisBehindLatest(),
      ended = response.nextShardIterator() == null,
      filled = response.records().size >= callLimit(limit),
      hashKeys = hashKeys
    )

  /** The same for records however they came (a GetRecords answer, an enhanced fan-out event). */
  def decode(
      key: ShardKey,
      position: ShardPosition,
      records: java.util.List[Record],
      millisBehindLatest: java.lang.Long,
      ended: Boolean,
      filled: Boolean,
      hashKeys: Option[HashKeySpan]): Poll = {
    var size = 0L
    val it = records.iterator()
    while (it.hasNext) {
      val r = it.next()
      val data = r.data().asByteArrayUnsafe()
      // Plain records' large payloads are adopted, not copied into the block (see RecordBlock.Builder.adopt).
      val copied = if (data.length < RecordBlock.AdoptMinBytes || KplDeaggregator.isAggregated(data)) data.length else 0
      size += copied + r.partitionKey().length + r.sequenceNumber().length
    }
    val out = new RecordBlock.Builder(records.size, math.min(size, Int.MaxValue - 64).toInt)
    var bytes = 0L
    var misplaced = 0
    var malformed = 0
    // A shard's records come in sequence order: once one is past `position`, so is every plain record after it.
    var past = false
    val each = records.iterator()
    while (each.hasNext) {
      val r = each.next()
      val data = r.data().asByteArrayUnsafe()
      bytes += data.length + r.partitionKey().length
      val arrival = r.approximateArrivalTimestamp().toEpochMilli
      val outcome =
        if (KplDeaggregator.isAggregated(data)) {
          KplDeaggregator.splitInto(out, key, r.sequenceNumber(), arrival, data, position, hashKeys)
        } else KplDeaggregator.NotAggregate
      outcome match {
        case KplDeaggregator.Split =>
        case KplDeaggregator.Misplaced =>
          misplaced += 1
          OddAggregates.misplaced(key, r.sequenceNumber(), hashKeys)
        case other =>
          if (past || SequenceNumbers.isAfter(position, r.sequenceNumber(), 0L)) {
            past = true
            out.adopt(r.partitionKey(), data, r.sequenceNumber(), 0L, arrival)
            other match {
              case KplDeaggregator.Malformed(why) =>
                malformed += 1
                out.markMalformedAggregate()
                OddAggregates.malformed(key, r.sequenceNumber(), why)
              case _ =>
            }
          }
      }
    }
    val behind = Option(millisBehindLatest).map(_.longValue).getOrElse(0L)
    val aggregates =
      if (misplaced == 0 && malformed == 0) AggregateCounts.zero else AggregateCounts(misplaced, malformed)
    Poll(out.result(), bytes, behind, ended, filled, aggregates)
  }

  /**
   * A call may return up to 10 MiB, five seconds of a shard's 2 MiB/s read quota: Kinesis serves it and refuses
   * the shard's calls until the debt is paid. Waiting out the debt, instead of calling into it, keeps every
   * call unthrottled and the rate at the quota.
   */
  def pacingNanos(config: SourceConfig, bytes: Long): Long =
    math.max(config.minFetchPeriod.toNanos, (bytes / readBytesPerSecond(config) * 1e9).toLong)

  private def readBytesPerSecond(config: SourceConfig): Double =
    config.maxFetchRateMBps.map(_ * 1000 * 1000).getOrElse(ReadQuotaBytesPerSecond)

  /**
   * What one prefetch call aims to bring back: a second of the shard's read rate. Larger answers read no faster
   * (the pacing waits them out) but hold more of the heap while they are decoded.
   */
  def callTargetBytes(config: SourceConfig): Long = readBytesPerSecond(config).toLong

  /** GetShardIterator refused a checkpointed sequence number: trimmed past retention, or the stream was recreated. */
  def isLostPosition(position: ShardPosition, e: KinesisException): Boolean = position.isInstanceOf[After] &&
    (e.isInstanceOf[InvalidArgumentException] || e.isInstanceOf[ResourceNotFoundException])

  /** Per [[DataLoss]]: fails, or returns where reading goes on (the shard's oldest record). */
  def lostPosition(config: SourceConfig, key: ShardKey, position: ShardPosition, e: KinesisException): ShardPosition = {
    DataLoss(
      config,
      key,
      s"position ${DataLoss.show(position)} can no longer be read " +
        s"(${e.awsErrorDetails().errorMessage()}): its records expired past the stream's retention, or the stream " +
        "was deleted and created again",
      "from the shard's oldest record",
      e
    )
    TrimHorizon
  }

  /**
   * The record a resume from `position` must find first: a position this query reached is a record it read, and
   * the iterator starts AT it. Positions given in `initialPosition` (sub-record -1 or Long.MaxValue, see
   * SourceConfig) need not name a record, so they are not checked.
   */
  def resumeRecord(position: ShardPosition): Option[String] = position match {
    case After(seq, sub) if sub >= 0 && sub != Long.MaxValue => Some(seq)
    case _ => None
  }

  /**
   * Kinesis does not refuse an iterator AT a trimmed record: it starts at the oldest record left. So the first
   * record after a resume must be the resume record itself; a later one means retention trimmed it, and records
   * between the two may have expired unread (per [[DataLoss]]). Returns the check still pending when the response
   * holds no record yet. At the tip or the shard's end with none there is no later record to tell a trim by, and
   * none that could be lost now.
   */
  def checkResumed(
      config: SourceConfig,
      key: ShardKey,
      position: ShardPosition,
      expected: String,
      response: GetRecordsResponse): Option[String] =
    checkResumed(
      config,
      key,
      position,
      expected,
      response.records().asScala.headOption.map(_.sequenceNumber()),
      response.nextShardIterator() == null || Option(response.millisBehindLatest()).exists(_ == 0L)
    )

  /** The same for the first record of any answer; `atTipOrEnd`: an answer with none could not have held one. */
  def checkResumed(
      config: SourceConfig,
      key: ShardKey,
      position: ShardPosition,
      expected: String,
      first: Option[String],
      atTipOrEnd: Boolean): Option[String] =
    first match {
      case Some(seq) if seq == expected => None
      case Some(seq) =>
        DataLoss(
          config,
          key,
          s"the resume position ${DataLoss.show(position)} is no longer in the shard (the " +
            s"first record left is $seq): it expired past the stream's retention, and so may records after it",
          s"from sequence number $seq"
        )
        None
      case None if atTipOrEnd => None
      case None => Some(expected)
    }
}
