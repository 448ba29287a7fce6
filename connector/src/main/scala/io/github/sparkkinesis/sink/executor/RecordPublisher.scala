package io.github.sparkkinesis.sink
package executor

import java.util
import java.util.concurrent.{CompletionException, LinkedBlockingQueue, TimeUnit}

import io.github.sparkkinesis.client.{RetryBackoff, StreamArn}
import org.apache.spark.{TaskContext, TaskKilledException}
import org.slf4j.LoggerFactory
import software.amazon.awssdk.services.kinesis.model._

/**
 * Sends one writer task's records to one stream: several PutRecords requests in flight at once, only failed
 * records resent, with backoff, until Kinesis takes them or the retry policy runs out.
 *
 * Which records go in which request is [[SendLanes]]' call (lanes by partition key, so requests never overtake
 * each other within a key) under the [[SendPacer]]'s flow control; the one reordering left is inside a request (a
 * record refused while a later one of its key was stored), which `preserveKeyOrder` rules out by sending at most
 * one record per key per request.
 *
 * Lane state lives on the task's thread: requests leave on sender threads ([[PutRecordsSender]]), which only hand
 * completions back through a queue, so lane state needs no locks, and the task blocks only when its buffer is full, when it must wait for a backoff or its shards'
 * pace, or at commit. While it waits it looks every [[KillCheckNanos]] whether Spark killed the task: Spark kills a
 * failed job's other tasks without interrupting their threads (unless the job asked for it), and a task waiting
 * here for answers would otherwise go on sending, retries included, after its job failed. The task then throws
 * and Spark calls the writer's abort, which stops its [[PutRecordsSender]].
 */
final class RecordPublisher(
    val stream: String,
    sender: PutRecordsSender,
    config: SinkConfig,
    limits: StreamLimits,
    metrics: SinkTaskMetrics,
    writerShare: Option[Double] = None) {
  import RecordPublisher._

  private final class Completion(
      val out: Outgoing,
      val bytes: Long,
      val response: PutRecordsResponse,
      val error: Throwable)

  private val backoff = new RetryBackoff(config.connection.retry)
  private val pacer = new SendPacer(
    config.flowControl,
    config.maxRecordsPerRequest,
    limits.openShards,
    stale => ShardMap.of(config.connection, stream, stale),
    System.nanoTime(),
    if (config.flowControl == FlowControlMode.Adaptive)
      ShardPaces.of(config.connection, stream, config.maxRecordsPerRequest, writerShare, System.nanoTime())
    else null
  )
  private val lanes =
    new SendLanes(config.maxInFlightRequests, config.preserveKeyOrder, config.maxBytesPerRequest, pacer, System.nanoTime())
  private val completions = new LinkedBlockingQueue[Completion]()
  // Two requests' worth per lane in records, two requests' worth in bytes: enough to keep every lane busy
  // without holding a task's whole partition in memory.
  private val maxQueuedRecords = 2 * config.maxInFlightRequests * config.maxRecordsPerRequest
  private val maxQueuedBytes = 2 * config.maxBytesPerRequest
  private var inFlight = 0
  private var inFlightBytes = 0L
  private var lastWarnNanos = 0L
  private var retriedSinceWarn = 0L
  private var aborted = false
  // The task this writer runs in (null outside one, as in unit tests), to see that Spark killed it.
  private val task = TaskContext.get()

  /** The largest record this stream takes: its own limit, and it must fit in one request. */
  val maxRecordBytes: Long = math.min(limits.maxRecordBytes, config.maxBytesPerRequest)

  def maxRecordBytesReason: String =
    if (limits.maxRecordBytes <= config.maxBytesPerRequest) "the stream's maximum record size" else "maxBytesPerRequest"

  // With aggregation=kpl user records go through it (addUser), and it adds what it seals to the lanes.
  private val aggregator: ShardAggregator = config.aggregation.map { a =>
    def known(map: Option[ShardMap]): ShardMap = map.getOrElse(throw SinkErrors.aggregationWithoutShards(stream))
    new ShardAggregator(
      math.min(a.maxBytes, maxRecordBytes),
      a.maxRecords,
      TimeUnit.MILLISECONDS.toNanos(a.lingerMs),
      maxQueuedBytes,
      known(ShardMap.recent(config.connection, stream)),
      () => known(ShardMap.of(config.connection, stream)),
      id => known(ShardMap.knowing(config.connection, stream, id)),
      r => lanes.add(r, System.nanoTime()),
      System.nanoTime()
    )
  }.orNull

  /** True when records go in through [[addUser]]: `aggregation=kpl`. */
  def aggregating: Boolean = aggregator != null

  def add(record: PendingRecord): Unit = {
    lanes.add(record, System.nanoTime())
    afterAdd()
  }

  def addUser(record: UserEntry): Unit = {
    aggregator.add(record, System.nanoTime())
    afterAdd()
  }

  private def afterAdd(): Unit = {
    pump()
    while (lanes.queuedRecords > maxQueuedRecords || lanes.queuedBytes > maxQueuedBytes) {
      await()
      pump()
    }
  }

  /** Returns once every record added so far is acknowledged; throws when one cannot be delivered. */
  def flush(): Unit = {
    // A reshard may send records of a stored aggregate again: they are packed while we wait, so seal each time.
    if (aggregator != null) aggregator.sealAll()
    pump()
    while (lanes.queuedRecords > 0 || inFlight > 0 || (aggregator != null && aggregator.hasOpen)) {
      await()
      if (aggregator != null) aggregator.sealAll()
      pump()
    }
  }

  /**
   * The task waits for its next row (real-time mode, see [[io.github.sparkkinesis.TaskIdleWork]]): answers are
   * taken, aggregates past their linger sealed, and what may leave now is sent. Never blocks.
   */
  def idle(): Unit = if (!aborted) {
    if (aggregator != null) aggregator.expire(System.nanoTime())
    pump()
  }

  /** What this stream's records hold in the task now: queued, in requests in flight, in open aggregates. */
  def heldBytes: Long = lanes.queuedBytes + inFlightBytes + (if (aggregator != null) aggregator.heldBytes else 0L)

  /**
   * Frees some of [[heldBytes]], waiting if it must: open aggregates are sealed once nothing else is queued or in
   * flight, what may leave is sent, and one answer (or a lane's pace) is waited for. The writer calls it when the
   * task's streams together hold more than its bound.
   */
  def release(): Unit = {
    if (aggregator != null && lanes.queuedRecords == 0 && inFlight == 0) aggregator.sealAll()
    pump()
    if (lanes.queuedRecords > 0 || inFlight > 0) {
      await()
      pump()
    }
  }

  /**
   * Nothing more is sent through this publisher; the writer stops the requests in flight (the task's
   * [[PutRecordsSender]]), whose outcome is ignored.
   */
  def abort(): Unit = aborted = true

  private def pump(): Unit = {
    if (aborted) throw new IllegalStateException(s"the writer for stream '$stream' was aborted")
    var c = completions.poll()
    while (c != null) {
      complete(c)
      c = completions.poll()
    }
    val now = System.nanoTime()
    var out = lanes.next(now)
    while (out != null) {
      send(out, now)
      out = lanes.next(now)
    }
  }

  /**
   * Waits for a completion, or until the earliest waiting lane may send, whichever comes first, at most
   * [[KillCheckNanos]]: then throws if Spark killed the task meanwhile.
   */
  private def await(): Unit = {
    val wait = lanes.waitNanos(System.nanoTime())
    val c =
      if (wait >= 0) completions.poll(math.min(wait, KillCheckNanos), TimeUnit.NANOSECONDS)
      else if (inFlight > 0) completions.poll(KillCheckNanos, TimeUnit.NANOSECONDS)
      else null
    if (c != null) complete(c)
    else if (task != null && task.isInterrupted()) {
      throw new TaskKilledException(s"killed while writing to Kinesis stream '$stream'")
    }
  }

  private def send(out: Outgoing, now: Long): Unit = {
    val batch = out.records
    val entries = new util.ArrayList[PutRecordsRequestEntry](batch.size)
    var bytes = 0L
    var i = 0
    while (i < batch.size) {
      val r = batch.get(i)
      r.attempts += 1
      entries.add(r.entry)
      bytes += r.size
      i += 1
    }
    inFlight += 1
    inFlightBytes += bytes
    metrics.requests += 1
    metrics.sentRecords += batch.size
    metrics.batchSize = out.allowedBatch
    metrics.flowControlDelayMs = TimeUnit.NANOSECONDS.toMillis(out.pauseNanos)
    val named = PutRecordsRequest.builder()
    val request = (if (StreamArn.isArn(stream)) named.streamARN(stream) else named.streamName(stream)).records(entries)
      .build()
    sender.send(request, (response, error) => completions.add(new Completion(out, bytes, response, error)))
  }

  private def complete(c: Completion): Unit = {
    lanes.completed(c.out)
    inFlight -= 1
    inFlightBytes -= c.bytes
    if (c.error != null) {
      // The SDK has already retried what its retry strategy allows (throttling, 5xx, network, timeouts).
      c.error match {
        case e: CompletionException if e.getCause != null => throw requestError(e.getCause)
        case e => throw requestError(e)
      }
    }
    val batch = c.out.records
    val results = c.response.records()
    if (results.size != batch.size) {
      throw new KinesisSinkWriteException(s"Kinesis sink: PutRecords to stream '$stream' answered " +
        s"${results.size} results for ${batch.size} records; no record of the request is known to be stored")
    }
    val outcome = PutRecordsOutcome.of(batch, i => results.get(i).errorCode(), backoff)
    metrics.recordsWritten += outcome.stored
    metrics.bytesWritten += outcome.storedBytes
    metrics.throttledRecords += outcome.throttled
    val now = System.nanoTime()
    if (aggregator == null) metrics.userRecordsWritten += outcome.stored
    else aggregatesStored(batch, results, now)
    pacer.onResponse(c.out, results, now)
    if (trace.isDebugEnabled) traceResponse(c, outcome.throttled)
    outcome.error(stream, backoff).foreach(e => throw e)
    val failed = outcome.failed
    if (failed != null) {
      metrics.retriedRecords += failed.size
      lanes.resend(
        failed,
        if (outcome.throttled == failed.size && pacer.pacing(failed)) now
        else now + backoff.delayBefore(failed.get(0).attempts + 1).toNanos)
      warnRetries(failed.size, now)
    }
  }

  /** Counts what a response stored, and sends again the records of an aggregate a reshard put in another shard. */
  private def aggregatesStored(
      batch: util.List[PendingRecord],
      results: util.List[PutRecordsResultEntry],
      now: Long): Unit = {
    var i = 0
    while (i < batch.size) {
      val result = results.get(i)
      if (result.errorCode() == null) {
        val r = batch.get(i)
        metrics.userRecordsWritten += r.userRecords
        val packed = r.packed
        if (packed != null) {
          metrics.aggregatesWritten += 1
          metrics.aggregatedRecords += packed.entries.size
          val shardId = result.shardId()
          if (shardId != null && shardId != packed.shardId) {
            val before = aggregator.rerouted
            aggregator.misplaced(packed, shardId, now)
            metrics.reroutedRecords += aggregator.rerouted - before
          }
        }
      }
      i += 1
    }
  }

  /** Retries are normal under load: one WARN line with counts per interval, not one per response. */
  private def warnRetries(count: Int, now: Long): Unit = {
    retriedSinceWarn += count
    if (now - lastWarnNanos >= WarnIntervalNanos || lastWarnNanos == 0L) {
      log.warn(s"Kinesis stream '$stream': resending $retriedSinceWarn record(s) Kinesis did not store " +
        s"(${metrics.throttledRecords} throttled so far in this task); flow control ${pacer.summary}")
      lastWarnNanos = now
      retriedSinceWarn = 0
    }
  }

  /** One line per response for benchmarks and for diagnosing a slow write (logger `...sink.FlowTrace`). */
  private def traceResponse(c: Completion, throttled: Int): Unit = {
    val partition = Option(TaskContext.get()).map(_.partitionId()).getOrElse(-1)
    trace.debug(s"t=${System.currentTimeMillis()} stream=$stream task=$partition records=${c.out.records.size} " +
      s"throttled=$throttled batch=${c.out.allowedBatch} pauseMs=${TimeUnit.NANOSECONDS.toMillis(c.out.pauseNanos)} " +
      pacer.traceFields)
  }

  private def requestError(cause: Throwable): Throwable = cause match {
    case _: ResourceNotFoundException => SinkErrors.streamNotFound(stream, config.connection)
    case e => SinkErrors.requestFailed(stream, e)
  }
}

object RecordPublisher {
  private val log = LoggerFactory.getLogger(classOf[RecordPublisher])
  private val trace = LoggerFactory.getLogger("io.github.sparkkinesis.sink.FlowTrace")
  private val WarnIntervalNanos = TimeUnit.SECONDS.toNanos(10)

  /** How often a task waiting for answers looks whether Spark killed it: a killed task stops within a tenth of a second. */
  val KillCheckNanos: Long = TimeUnit.MILLISECONDS.toNanos(100)
}
