package io.github.sparkkinesis.sink

import java.util
import java.util.concurrent.{CompletableFuture, CompletionException, LinkedBlockingQueue, TimeUnit}

import scala.util.control.NonFatal

import io.github.sparkkinesis.client.RetryBackoff
import org.apache.spark.TaskContext
import org.slf4j.LoggerFactory
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * Sends one writer task's records to one stream: several PutRecords requests in flight at once, only failed
 * records resent, with backoff, until Kinesis takes them or the retry policy runs out.
 *
 * Records are spread over `maxInFlightRequests` lanes by partition key. A lane has at most one request in flight
 * and resends its failures at the head of its next request, so requests never overtake each other within a key;
 * the one reordering left is inside a request (a record refused while a later one of its key was stored), which
 * `preserveKeyOrder` rules out by sending at most one record per key per request.
 *
 * Everything runs on the task's thread: SDK callbacks only hand completions over through a queue, so lane state
 * needs no locks, and the task blocks only when its buffer is full, when it must wait for a backoff or the flow
 * controller's pause, or at commit.
 */
final class RecordPublisher(
    val stream: String,
    client: KinesisAsyncClient,
    config: SinkConfig,
    limits: StreamLimits,
    metrics: SinkTaskMetrics) {
  import RecordPublisher._

  private final class Lane {
    val batcher = new RecordBatcher(config.preserveKeyOrder)
    var busy = false
    var notBeforeNanos: Long = System.nanoTime()
  }

  private final class Completion(
      val lane: Lane,
      val batch: util.ArrayList[PendingRecord],
      val sent: Sent,
      val response: PutRecordsResponse,
      val error: Throwable)

  /** What the flow controller needs to know of a request when its response arrives. */
  private final class Sent(val atNanos: Long, val units: Double, val fullBatch: Boolean)

  private val backoff = new RetryBackoff(config.connection.retry)
  private val flow = FlowController(config.flowControl, config.maxRecordsPerRequest, limits.openShards)
  private val lanes = Array.fill(config.maxInFlightRequests)(new Lane)
  private val completions = new LinkedBlockingQueue[Completion]()
  // Two requests' worth per lane in records, two requests' worth in bytes: enough to keep every lane busy
  // without holding a task's whole partition in memory.
  private val maxQueuedRecords = 2 * lanes.length * config.maxRecordsPerRequest
  private val maxQueuedBytes = 2 * config.maxBytesPerRequest
  private var queuedRecords = 0
  private var queuedBytes = 0L
  private var inFlight = 0
  private var nextSendAtNanos = System.nanoTime()
  private var firstLane = 0
  private var lastWarnNanos = 0L
  private var retriedSinceWarn = 0L
  private var aborted = false

  /** The largest record this stream takes: its own limit, and it must fit in one request. */
  val maxRecordBytes: Long = math.min(limits.maxRecordBytes, config.maxBytesPerRequest)

  def maxRecordBytesReason: String =
    if (limits.maxRecordBytes <= config.maxBytesPerRequest) "the stream's maximum record size" else "maxBytesPerRequest"

  def add(record: PendingRecord): Unit = {
    lanes((record.partitionKey.hashCode & Int.MaxValue) % lanes.length).batcher.add(record)
    queuedRecords += 1
    queuedBytes += record.size
    pump()
    while (queuedRecords > maxQueuedRecords || queuedBytes > maxQueuedBytes) {
      await()
      pump()
    }
  }

  /** Returns once every record added so far is acknowledged; throws when one cannot be delivered. */
  def flush(): Unit = {
    pump()
    while (queuedRecords > 0 || inFlight > 0) {
      await()
      pump()
    }
  }

  /** Stops sending; requests in flight finish on their own and their outcome is ignored. */
  def abort(): Unit = aborted = true

  private def pump(): Unit = {
    if (aborted) throw new IllegalStateException(s"the writer for stream '$stream' was aborted")
    var c = completions.poll()
    while (c != null) {
      complete(c)
      c = completions.poll()
    }
    val now = System.nanoTime()
    // Rotating the first lane keeps the flow controller's pause from always favouring lane 0.
    var i = 0
    while (i < lanes.length) {
      val lane = lanes((firstLane + i) % lanes.length)
      if (!lane.busy && !lane.batcher.isEmpty && now - lane.notBeforeNanos >= 0 && now - nextSendAtNanos >= 0) {
        send(lane, now)
      }
      i += 1
    }
    firstLane = (firstLane + 1) % lanes.length
  }

  /** Waits for a completion, or until the earliest waiting lane may send, whichever comes first. */
  private def await(): Unit = {
    val now = System.nanoTime()
    var wakeAt = 0L
    var waiting = false
    for (lane <- lanes if !lane.busy && !lane.batcher.isEmpty) {
      val at = if (lane.notBeforeNanos - nextSendAtNanos > 0) lane.notBeforeNanos else nextSendAtNanos
      if (!waiting || at - wakeAt < 0) wakeAt = at
      waiting = true
    }
    val c =
      if (waiting) completions.poll(math.max(0L, wakeAt - now), TimeUnit.NANOSECONDS)
      else if (inFlight > 0) completions.take()
      else null
    if (c != null) complete(c)
  }

  private def send(lane: Lane, now: Long): Unit = {
    val batchSize = math.min(flow.batchSize, config.maxRecordsPerRequest)
    val batch = lane.batcher.take(batchSize, config.maxBytesPerRequest)
    val entries = new util.ArrayList[PutRecordsRequestEntry](batch.size)
    var units = 0.0
    var i = 0
    while (i < batch.size) {
      val r = batch.get(i)
      r.attempts += 1
      queuedBytes -= r.size
      units += FlowController.units(r.size)
      entries.add(r.entry)
      i += 1
    }
    queuedRecords -= batch.size
    lane.busy = true
    inFlight += 1
    val pause = flow.pauseNanos(units)
    // Keep to the schedule when a send comes a little late, so the pace is the controller's rate, but do not
    // bank the time of an idle spell for a burst.
    nextSendAtNanos = (if (nextSendAtNanos - (now - pause) > 0) nextSendAtNanos else now) + pause
    metrics.batchSize = batchSize
    metrics.flowControlDelayMs = TimeUnit.NANOSECONDS.toMillis(pause)
    val sent = new Sent(now, units, fullBatch = batch.size == batchSize || !lane.batcher.isEmpty)
    val request = PutRecordsRequest.builder().streamName(stream).records(entries).build()
    val future =
      try client.putRecords(request)
      catch { case NonFatal(e) => CompletableFuture.failedFuture[PutRecordsResponse](e) }
    future.whenComplete((response, error) => completions.add(new Completion(lane, batch, sent, response, error)))
  }

  private def complete(c: Completion): Unit = {
    c.lane.busy = false
    inFlight -= 1
    if (c.error != null) {
      // The SDK has already retried what its retry strategy allows (throttling, 5xx, network, timeouts).
      c.error match {
        case e: CompletionException if e.getCause != null => throw requestError(e.getCause)
        case e => throw requestError(e)
      }
    }
    val results = c.response.records()
    if (results.size != c.batch.size) {
      throw new KinesisSinkWriteException(s"Kinesis sink: PutRecords to stream '$stream' answered " +
        s"${results.size} results for ${c.batch.size} records; no record of the request is known to be stored")
    }
    val outcome = PutRecordsOutcome.of(c.batch, i => results.get(i).errorCode(), backoff)
    metrics.recordsWritten += outcome.stored
    metrics.bytesWritten += outcome.storedBytes
    metrics.throttledRecords += outcome.throttled
    val now = System.nanoTime()
    flow.onResponse(FlowController.Response(c.batch.size, c.sent.units, outcome.throttled, c.sent.atNanos, now,
      c.sent.fullBatch))
    if (trace.isDebugEnabled) traceResponse(c, outcome.throttled)
    outcome.error(stream, backoff).foreach(e => throw e)
    val failed = outcome.failed
    if (failed != null) {
      metrics.retriedRecords += failed.size
      c.lane.batcher.requeueFirst(failed)
      var bytes = 0L
      var j = 0
      while (j < failed.size) { bytes += failed.get(j).size; j += 1 }
      queuedRecords += failed.size
      queuedBytes += bytes
      c.lane.notBeforeNanos =
        if (outcome.throttled == failed.size && flow.pacing) now
        else now + backoff.delayBefore(failed.get(0).attempts + 1).toNanos
      warnRetries(failed.size, now)
    }
  }

  /** Retries are normal under load: one WARN line with counts per interval, not one per response. */
  private def warnRetries(count: Int, now: Long): Unit = {
    retriedSinceWarn += count
    if (now - lastWarnNanos >= WarnIntervalNanos || lastWarnNanos == 0L) {
      log.warn(s"Kinesis stream '$stream': resending $retriedSinceWarn record(s) Kinesis did not store " +
        s"(${metrics.throttledRecords} throttled so far in this task); batch size ${flow.batchSize}, " +
        s"pause ${metrics.flowControlDelayMs} ms")
      lastWarnNanos = now
      retriedSinceWarn = 0
    }
  }

  /** One line per response for benchmarks and for diagnosing a slow write (logger `...sink.FlowTrace`). */
  private def traceResponse(c: Completion, throttled: Int): Unit = {
    val partition = Option(TaskContext.get()).map(_.partitionId()).getOrElse(-1)
    val rate = flow match {
      case r: RateFlowController => f" rate=${r.unitsPerSecond}%.1f"
      case _ => ""
    }
    trace.debug(s"t=${System.currentTimeMillis()} stream=$stream task=$partition records=${c.batch.size} " +
      s"throttled=$throttled batch=${metrics.batchSize} pauseMs=${metrics.flowControlDelayMs}$rate")
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
}
