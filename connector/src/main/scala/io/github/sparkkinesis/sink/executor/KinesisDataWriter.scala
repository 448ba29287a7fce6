package io.github.sparkkinesis.sink
package executor

import java.time.Duration
import java.util

import scala.util.control.NonFatal

import io.github.sparkkinesis.TaskIdleWork
import io.github.sparkkinesis.client.{KinesisClientFactory, StreamArn}
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}
import org.apache.spark.unsafe.types.UTF8String
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry

/**
 * One Spark task's writer. It turns rows into records, checks each against Kinesis's limits, and hands them to
 * the stream's [[RecordPublisher]]; `commit` returns only once every record it took is acknowledged, which is
 * what makes the sink at-least-once. Each row is checked before it joins a request ([[SinkInput]]); a row that can
 * never be written fails the task, naming its position in the task, once every row before it is delivered.
 *
 * `abort` (Spark gave up on the task: it failed, or its job did and Spark killed it) stops the task's sending: no
 * request is sent any more, the SDK retries no further, and the attempts on the wire are awaited, bounded (see
 * docs/design/sink-flow-control.md, "Stopping").
 *
 * @param knownLimits the `streamName` stream's limits, learned on the driver; other streams are described here
 * @param writerShare the share of each shard's quota this executor's paces start at ([[driver.WriterShare]])
 */
final class KinesisDataWriter(
    config: SinkConfig,
    columns: SinkColumns,
    knownLimits: Option[StreamLimits],
    onRejected: String => Unit = _ => (),
    writerShare: Option[Double] = None) extends DataWriter[InternalRow] with SparkLineSink.FlushAfterInput {
  import KinesisDataWriter._

  private val metrics = new SinkTaskMetrics
  metrics.batchSize = config.maxRecordsPerRequest
  metrics.paceStartShare = writerShare.fold(0L)(s => math.round(s * 1000))
  private val hashKeyOrdinal = columns.explicitHashKey.getOrElse(-1)
  private val sender = new PutRecordsSender(KinesisClientFactory.sync(config.connection))
  private val publishers = new util.LinkedHashMap[String, RecordPublisher]()
  private val maxHeldBytes = KinesisDataWriter.maxHeldBytes(config)
  // Rows mostly go to one stream: remember the last one instead of a map lookup (and a String) per row.
  private var lastStream: UTF8String = _
  private var lastPublisher: RecordPublisher = _
  // Rows this task has taken, the current one included: what a rejected row's message names it by.
  private var rows = 0L
  private val partition = Option(TaskContext.get()).map(_.partitionId())
  // The region the client calls, set by the option or found by the SDK's chain: an ARN of any other region would
  // otherwise write to the stream of the same name here.
  private lazy val region = KinesisClientFactory.resolveRegion(config.connection).id()
  // Real-time mode: sends go on while the task waits for rows inside this connector's source.
  TaskIdleWork.register(() => publishers.values.forEach(_.idle()))

  override def write(row: InternalRow): Unit = {
    rows += 1
    val publisher = publisherFor(row)
    if (row.isNullAt(columns.partitionKey)) rejected(SinkErrors.nullKey(streamOf(publisher), at))
    val keyUtf8 = row.getUTF8String(columns.partitionKey)
    val key = keyUtf8.toString
    // Decoding replaced what is not UTF-8 (stray bytes, encoded lone surrogates) with U+FFFD: the key sent would
    // not be the row's, and would route elsewhere. Only then are the bytes looked at.
    if (key.indexOf('\uFFFD') >= 0) {
      SinkInput.malformedUtf8(keyUtf8.getBytes).foreach(p =>
        rejected(SinkErrors.keyNotUtf8(streamOf(publisher), key, p, at)))
    }
    val chars = keyUtf8.numChars()
    if (chars < 1 || chars > MaxKeyChars) rejected(SinkErrors.keyLength(streamOf(publisher), key, chars, at))
    if (row.isNullAt(columns.data)) rejected(SinkErrors.nullData(streamOf(publisher), key, at))
    val data = if (columns.dataIsBinary) row.getBinary(columns.data) else row.getUTF8String(columns.data).getBytes
    val size = data.length.toLong + keyUtf8.numBytes()
    if (size > publisher.maxRecordBytes) {
      rejected(SinkErrors.tooLarge(
        streamOf(publisher),
        key,
        size,
        publisher.maxRecordBytes,
        publisher.maxRecordBytesReason,
        at))
    }
    val hashKey =
      if (hashKeyOrdinal >= 0 && !row.isNullAt(hashKeyOrdinal)) {
        val h = row.getUTF8String(hashKeyOrdinal).toString
        if (!validHashKey(h)) rejected(SinkErrors.badHashKey(streamOf(publisher), key, h, at))
        h
      } else null
    if (publisher.aggregating) publisher.addUser(new UserEntry(key, hashKey, data, size.toInt))
    else {
      val entry = PutRecordsRequestEntry.builder().partitionKey(key).data(SdkBytes.fromByteArrayUnsafe(data))
      if (hashKey != null) entry.explicitHashKey(hashKey)
      publisher.add(new PendingRecord(entry.build(), key, size.toInt))
    }
    if (publishers.size == 1) {
      val held = publisher.heldBytes
      if (held > metrics.heldBytesPeak) metrics.heldBytesPeak = held
    } else boundAcrossStreams()
  }

  /**
   * Each stream's publisher bounds what it holds; a task writing many streams (the `stream` column) keeps their
   * sum within the same bound, by waiting on the stream that holds most.
   */
  private def boundAcrossStreams(): Unit = {
    var first = true
    while (true) {
      var held, most = 0L
      var biggest: RecordPublisher = null
      publishers.values.forEach { p =>
        val h = p.heldBytes
        held += h
        if (biggest == null || h > most) { biggest = p; most = h }
      }
      if (first && held > metrics.heldBytesPeak) metrics.heldBytesPeak = held
      first = false
      if (held <= maxHeldBytes) return
      biggest.release()
    }
  }

  override def commit(): WriterCommitMessage = {
    flushAll()
    KinesisWriterCommitMessage(
      metrics.recordsWritten,
      metrics.bytesWritten,
      metrics.throttledRecords,
      metrics.retriedRecords,
      metrics.userRecordsWritten,
      metrics.aggregatesWritten)
  }

  override def abort(): Unit = {
    publishers.values.forEach(_.abort())
    stopSending()
  }

  // After commit nothing is in flight; after a failure Spark calls abort first. Stopping here too keeps a writer
  // closed by any other path from leaving requests behind.
  override def close(): Unit = stopSending()

  // Spark calls close after abort: the bounded wait and its WARN happen once.
  private var stopped = false

  private def stopSending(): Unit = if (!stopped) {
    stopped = true
    // The task's thread may come here interrupted (Spark interrupts killed tasks when the job asks it to): the
    // bounded wait must still happen, and the interrupt is Spark's to see afterwards.
    val interrupted = Thread.interrupted()
    try {
      val bound = abortWait(config)
      val left = sender.stop(bound)
      if (left > 0) {
        log.warn(s"Kinesis sink: task stopped with $left PutRecords request(s) still unanswered after " +
          s"${bound.toMillis} ms (the attempt timeout, at most ${MaxAbortWait.getSeconds} s); Kinesis may still " +
          "store their records (at-least-once), but no request of this task is sent or retried any more")
      }
    } finally if (interrupted) Thread.currentThread().interrupt()
  }

  override def currentMetricsValues(): Array[CustomTaskMetric] = metrics.values

  override protected def flushAll(): Unit = publishers.values.forEach(_.flush())

  /**
   * A record that can never be written: deliver everything accepted before it, tell the driver (so Spark's
   * retries of this task send nothing again, see [[RejectionLedger]]), then fail the task.
   */
  private def rejected(error: KinesisSinkRecordException): Nothing = {
    try flushAll()
    catch { case NonFatal(e) => error.addSuppressed(e) }
    try onRejected(error.getMessage)
    catch { case NonFatal(e) => error.addSuppressed(e) }
    throw error
  }

  private def streamOf(publisher: RecordPublisher): String = publisher.stream

  /** The current row's position, as messages name it: "row 17 of this task (partition 3)". */
  private def at: String = SinkInput.position(rows, partition)

  private def publisherFor(row: InternalRow): RecordPublisher = config.streamName match {
    case Some(name) =>
      if (lastPublisher == null) lastPublisher = newPublisher(name, knownLimits)
      lastPublisher
    case None =>
      val i = columns.stream.get
      if (row.isNullAt(i)) {
        val key = if (row.isNullAt(columns.partitionKey)) "null" else row.getUTF8String(columns.partitionKey).toString
        rejected(SinkErrors.nullStream(columns.streamColumn, key, at))
      }
      val name = row.getUTF8String(i)
      if (lastPublisher == null || name != lastStream) {
        val stream = streamNamed(name.toString)
        lastPublisher = publishers.get(stream)
        if (lastPublisher == null) lastPublisher = newPublisher(stream, None)
        // Only once the stream is known good: a rejected value is never taken for the last stream written.
        lastStream = name.clone()
      }
      lastPublisher
  }

  /**
   * The stream a row's column names: a name, or an ARN (what the source's column holds for streams given by
   * `streamARN`), written to by that ARN (another account's stream is reached only so). Publishers are keyed by
   * the value, so a stream named both ways within one task gets a publisher for each.
   */
  private def streamNamed(value: String): String = StreamArn.parse(value) match {
    case Some(arn) =>
      if (arn.region != region)
        rejected(SinkErrors.arnInOtherRegion(columns.streamColumn, value, arn.region, region, at))
      value
    case None =>
      SinkInput.badStreamName(value).foreach(p => rejected(SinkErrors.badStream(columns.streamColumn, value, p, at)))
      value
  }

  private def newPublisher(stream: String, known: Option[StreamLimits]): RecordPublisher = {
    val limits = known.getOrElse {
      // A row naming a stream that does not exist: the row is at fault, not the query's options.
      try StreamLimits.of(config.connection, stream)
      catch {
        case e: KinesisSinkStreamNotFoundException =>
          rejected(SinkErrors.streamMissing(columns.streamColumn, stream, e.getMessage, at))
      }
    }
    val publisher = new RecordPublisher(stream, sender, config, limits, metrics, writerShare)
    publishers.put(stream, publisher)
    publisher
  }
}

object KinesisDataWriter {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[KinesisDataWriter])

  val MaxKeyChars = 256

  /** The longest an aborted task waits for its attempts on the wire: Spark's task thread is blocked meanwhile. */
  val MaxAbortWait: Duration = Duration.ofSeconds(10)

  /** An attempt ends by its timeout at the latest, so waiting longer than that is never needed. */
  def abortWait(config: SinkConfig): Duration = {
    val attempt = config.connection.timeouts.apiCallAttempt
    if (attempt.compareTo(MaxAbortWait) < 0) attempt else MaxAbortWait
  }

  /**
   * What one stream's publisher can hold at most (two requests' worth queued, as many open aggregates, the requests
   * in flight), and so what a task keeps for all its streams together.
   */
  def maxHeldBytes(config: SinkConfig): Long = (config.maxInFlightRequests + 4L) * config.maxBytesPerRequest

  /**
   * A decimal integer in 0..2^128-1 written as PutRecords' pattern `0|([1-9]\d{0,38})` has it: a leading zero
   * would fail the whole request (ValidationException), not just its record.
   */
  def validHashKey(s: String): Boolean =
    io.github.sparkkinesis.source.HashKeySpan.isHashKey(s) && (s == "0" || s.charAt(0) != '0')
}
