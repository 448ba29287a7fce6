package io.github.sparkkinesis.simulator

import scala.collection.mutable

/**
 * The simulated account: its streams, the server-wide sequence counter, settings, faults and counters. One lock
 * guards all of it; every operation is a few microseconds of in-memory work, so a single lock never becomes the
 * bottleneck, and it makes each call atomic the way a test reasoning about Kinesis expects.
 */
final class Simulator(initial: Settings = Settings(), seed: Long = 0L, clock: () => Long = () => System.currentTimeMillis()) {
  val lock = new Object
  @volatile private var current = initial
  val streams: mutable.TreeMap[String, StreamState] = mutable.TreeMap.empty
  val counters = new Counters
  val faults = new Faults(seed)
  private var counter = 0L
  private var incarnations = 0L
  private var iteratorSerial = 0L
  /**
   * Iterators whose serial is at most this are expired (forced expiry from the admin API). By order of issue, not
   * by time: with `clockOffsetMs` moved back after an expiry, iterators issued later would look older than it.
   */
  @volatile var iteratorsExpiredThrough: Long = 0L
  private var describeSummaryBucketFor: QuotaSettings = _
  private var describeSummaryBucketValue: TokenBucket = _

  val region = "us-east-1"

  /** Request authentication, when on (see [[Auth]]). */
  @volatile var auth: Option[Auth] = None

  def settings: Settings = current
  def updateSettings(f: Settings => Settings): Settings = lock.synchronized { current = f(current); current }

  def now(): Long = clock() + current.clockOffsetMs

  def nextCounter(): Long = { counter += 1; counter }
  def nextIteratorSerial(): Long = lock.synchronized { iteratorSerial += 1; iteratorSerial }
  def lastCounter: Long = counter
  def nextIncarnation(): Long = { incarnations += 1; incarnations }

  def arn(name: String, account: String = StreamState.Account): String =
    s"arn:aws:kinesis:$region:$account:stream/$name"

  def retentionMillis(stream: StreamState): Long =
    settings.retentionMillis.getOrElse(stream.retentionHours * 3600L * 1000L)

  /**
   * The stream a request names: by StreamARN, in the ARN's account and region (a stream of another account is
   * reached only this way, as through its resource policy); by StreamName, in the caller's account.
   */
  def stream(req: Req): StreamState = req.optStr("StreamARN") match {
    case Some(arn) => streamOfArn(arn)
    case None => streamNamed(req.optStr("StreamName")
        .getOrElse(throw KinesisError.invalid("Either StreamName or StreamARN must be provided")))
  }

  def streamNamed(name: String): StreamState = streamIn(StreamState.Account, name)

  private def streamIn(account: String, name: String): StreamState =
    streams.getOrElse(StreamState.keyOf(account, name), throw KinesisError.notFound(
      s"Stream $name under account $account not found."))

  /** The stream an iterator, subscription or page token names by its [[StreamState.key]]. */
  def streamKeyed(key: String): StreamState =
    streams.getOrElse(key, throw KinesisError.notFound(s"Stream $key not found."))

  private val ArnPattern = """arn:aws:kinesis:([a-z0-9-]+):(\d{12}):stream/([a-zA-Z0-9_.-]{1,128})""".r

  private def streamOfArn(arn: String): StreamState = arn match {
    case ArnPattern(r, account, name) if r == region => streamIn(account, name)
    case ArnPattern(_, account, name) => throw KinesisError.notFound(s"Stream $name under account $account not found.")
    case _ => throw KinesisError.validation(s"1 validation error detected: Value '$arn' at 'streamARN' failed to " +
        "satisfy constraint: Member must satisfy regular expression pattern: arn:aws.*:kinesis:.*:\\d{12}:stream/\\S+")
  }

  /** A new stream with `shardCount` equal shards: CreateStream's, and the admin API's for other accounts. */
  def createStream(name: String, shardCount: Int, maxRecordKiB: Int, account: String): StreamState = lock.synchronized {
    if (streams.contains(StreamState.keyOf(account, name)))
      throw KinesisError.inUse(s"Stream $name under account $account already exists.")
    val t = now()
    val stream = new StreamState(name, arn(name, account), nextIncarnation(), t, StreamState.DefaultRetentionHours,
      maxRecordKiB, account)
    HashKeys.uniformRanges(shardCount).foreach { case (start, end) =>
      stream.addShard(new Shard(stream.newShardId(), None, None, start, end, nextCounter(), t))
    }
    streams.put(stream.key, stream)
    stream
  }

  def shard(stream: StreamState, shardId: String): Shard = stream.shard(shardId).getOrElse(throw KinesisError.notFound(
    s"Shard $shardId in stream ${stream.name} under account ${StreamState.Account} does not exist"))

  /** Drops what retention has passed: old records, and closed shards whose every record is gone. */
  def trim(stream: StreamState, now: Long): Unit = {
    val cutoff = now - retentionMillis(stream)
    stream.shards.foreach(_.log.trimBefore(cutoff))
    val expired = stream.shards.filter(s => s.closedMillis.exists(_ < cutoff))
    if (expired.nonEmpty) stream.removeShards(expired)
    stream.nextTrimMillis = now + Simulator.TrimEveryMillis
  }

  /**
   * A data-plane call's trim: the shard it reads at once (its records past retention are never served), every
   * shard at most every [[Simulator.TrimEveryMillis]] of simulator time. Trimming every shard on every call cost a
   * pass over all of them per call: at 10,000 shards, most of the simulator's time. So a closed shard retention
   * passed may still be found for that long; a clock moved on by the admin API trims at the next call.
   */
  def trimFor(stream: StreamState, now: Long, reading: Option[Shard]): Unit = {
    reading.foreach(_.log.trimBefore(now - retentionMillis(stream)))
    // A clock moved back (the admin API's offset) trims at once too.
    if (now >= stream.nextTrimMillis || now < stream.nextTrimMillis - Simulator.TrimEveryMillis) trim(stream, now)
  }

  def describeSummaryBucket(settings: QuotaSettings, now: Long): TokenBucket = {
    if (describeSummaryBucketFor ne settings) {
      describeSummaryBucketValue = new TokenBucket(settings.describeStreamSummaryPerSecond, now)
      describeSummaryBucketFor = settings
    }
    describeSummaryBucketValue
  }

  /** Deletes a stream at once: the DeleteStream call, and the admin API's stream-deletion fault. */
  def deleteStream(name: String): Unit = lock.synchronized {
    streamNamed(name)
    streams.remove(name)
  }

  def expireAllIterators(): Unit = lock.synchronized { iteratorsExpiredThrough = iteratorSerial }
}

object Simulator {
  /** How often, in simulator time, a data-plane call trims every shard of its stream ([[Simulator.trimFor]]). */
  val TrimEveryMillis = 100L
}
