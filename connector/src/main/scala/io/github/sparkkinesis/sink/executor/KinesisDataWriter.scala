package io.github.sparkkinesis.sink
package executor

import java.math.BigInteger
import java.util

import scala.util.control.NonFatal

import io.github.sparkkinesis.TaskIdleWork
import io.github.sparkkinesis.client.{KinesisClientFactory, StreamArn}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}
import org.apache.spark.unsafe.types.UTF8String
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry

/**
 * One Spark task's writer. It turns rows into records, checks each against Kinesis's limits, and hands them to
 * the stream's [[RecordPublisher]]; `commit` returns only once every record it took is acknowledged, which is
 * what makes the sink at-least-once.
 *
 * @param knownLimits the `streamName` stream's limits, learned on the driver; other streams are described here
 */
final class KinesisDataWriter(
    config: SinkConfig,
    columns: SinkColumns,
    knownLimits: Option[StreamLimits],
    onRejected: String => Unit = _ => ()) extends DataWriter[InternalRow] with SparkLineSink.FlushAfterInput {
  import KinesisDataWriter._

  private val metrics = new SinkTaskMetrics
  metrics.batchSize = config.maxRecordsPerRequest
  private val hashKeyOrdinal = columns.explicitHashKey.getOrElse(-1)
  private val client = KinesisClientFactory.sync(config.connection)
  private val publishers = new util.LinkedHashMap[String, RecordPublisher]()
  private val maxHeldBytes = KinesisDataWriter.maxHeldBytes(config)
  // Rows mostly go to one stream: remember the last one instead of a map lookup (and a String) per row.
  private var lastStream: UTF8String = _
  private var lastPublisher: RecordPublisher = _
  // Real-time mode: sends go on while the task waits for rows inside this connector's source.
  TaskIdleWork.register(() => publishers.values.forEach(_.idle()))

  override def write(row: InternalRow): Unit = {
    val publisher = publisherFor(row)
    if (row.isNullAt(columns.partitionKey)) rejected(SinkErrors.nullKey(streamOf(publisher)))
    val keyUtf8 = row.getUTF8String(columns.partitionKey)
    val key = keyUtf8.toString
    val chars = keyUtf8.numChars()
    if (chars < 1 || chars > MaxKeyChars) rejected(SinkErrors.keyLength(streamOf(publisher), key, chars))
    if (row.isNullAt(columns.data)) rejected(SinkErrors.nullData(streamOf(publisher), key))
    val data = if (columns.dataIsBinary) row.getBinary(columns.data) else row.getUTF8String(columns.data).getBytes
    val size = data.length.toLong + keyUtf8.numBytes()
    if (size > publisher.maxRecordBytes) {
      rejected(SinkErrors.tooLarge(
        streamOf(publisher),
        key,
        size,
        publisher.maxRecordBytes,
        publisher.maxRecordBytesReason))
    }
    val hashKey =
      if (hashKeyOrdinal >= 0 && !row.isNullAt(hashKeyOrdinal)) {
        val h = row.getUTF8String(hashKeyOrdinal).toString
        if (!validHashKey(h)) rejected(SinkErrors.badHashKey(streamOf(publisher), key, h))
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

  override def abort(): Unit = publishers.values.forEach(_.abort())

  override def close(): Unit = ()

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

  private def publisherFor(row: InternalRow): RecordPublisher = config.streamName match {
    case Some(name) =>
      if (lastPublisher == null) lastPublisher = newPublisher(name, knownLimits)
      lastPublisher
    case None =>
      val i = columns.stream.get
      if (row.isNullAt(i)) {
        val key = if (row.isNullAt(columns.partitionKey)) "null" else row.getUTF8String(columns.partitionKey).toString
        rejected(SinkErrors.nullStream(columns.streamColumn, key))
      }
      val name = row.getUTF8String(i)
      if (lastPublisher == null || name != lastStream) {
        lastStream = name.clone()
        val stream = streamNamed(lastStream.toString)
        lastPublisher = publishers.get(stream)
        if (lastPublisher == null) lastPublisher = newPublisher(stream, None)
      }
      lastPublisher
  }

  /**
   * The stream a row's column names: a name, or an ARN (what the source's column holds for streams given by
   * `streamARN`), written to by its name. Publishers are keyed by name, so both spellings share one.
   */
  private def streamNamed(value: String): String = StreamArn.parse(value) match {
    case Some(arn) =>
      config.connection.region.filter(_ != arn.region)
        .foreach(r => rejected(SinkErrors.arnInOtherRegion(columns.streamColumn, value, arn.region, r)))
      arn.name
    case None => value
  }

  private def newPublisher(stream: String, limits: Option[StreamLimits]): RecordPublisher = {
    val publisher =
      new RecordPublisher(stream, client, config, limits.getOrElse(StreamLimits.of(config.connection, stream)), metrics)
    publishers.put(stream, publisher)
    publisher
  }
}

object KinesisDataWriter {
  val MaxKeyChars = 256

  /**
   * What one stream's publisher can hold at most (two requests' worth queued, as many open aggregates, the requests
   * in flight), and so what a task keeps for all its streams together.
   */
  def maxHeldBytes(config: SinkConfig): Long = (config.maxInFlightRequests + 4L) * config.maxBytesPerRequest
  private val MaxHashKey = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE)

  /** A decimal integer in 0..2^128-1, as PutRecords requires. */
  def validHashKey(s: String): Boolean =
    s.nonEmpty && s.length <= 39 && s.forall(c => c >= '0' && c <= '9') && new BigInteger(s).compareTo(MaxHashKey) <= 0
}
