package io.github.sparkkinesis.sink

import io.github.sparkkinesis.client.{ConnectionConfig, KinesisClientFactory, StreamArn, TtlCache}
import software.amazon.awssdk.core.exception.SdkException
import software.amazon.awssdk.services.kinesis.model.{DescribeStreamSummaryRequest, ResourceNotFoundException}

/**
 * What the sink needs to know about a target stream, from DescribeStreamSummary.
 *
 * @param maxRecordBytes the stream's maximum record size (data plus partition key)
 */
final case class StreamLimits(openShards: Int, maxRecordBytes: Long)

object StreamLimits {
  /** The limit of streams not configured for large records, and what is assumed when the stream does not say. */
  val DefaultMaxRecordBytes: Long = 1024L * 1024

  /**
   * DescribeStreamSummary allows 20 calls per second per account, shared with every other client: the driver
   * asks once per query start or micro-batch and ships the answer to the tasks, and each JVM remembers an answer
   * for 30 s, so tasks routing rows to other streams with the `stream` column do not storm the API either.
   */
  private val cache = new TtlCache[(ConnectionConfig, String), StreamLimits](30L * 1000 * 1000 * 1000)

  def of(connection: ConnectionConfig, stream: String): StreamLimits =
    cache.get((connection, stream))(_ => describe(connection, stream))

  private def describe(connection: ConnectionConfig, stream: String): StreamLimits = {
    val summary =
      try {
        KinesisClientFactory.sync(connection)
          .describeStreamSummary((if (StreamArn.isArn(stream)) DescribeStreamSummaryRequest.builder().streamARN(stream)
                                  else DescribeStreamSummaryRequest.builder().streamName(stream)).build())
          .streamDescriptionSummary()
      } catch {
        case _: ResourceNotFoundException => throw SinkErrors.streamNotFound(stream, connection)
        case e: SdkException => throw SinkErrors.describeFailed(stream, e)
      }
    // Emulators may leave the newer field out; Kinesis's default then applies.
    val maxRecord = Option(summary.maxRecordSizeInKiB()).map(_.longValue * 1024).getOrElse(DefaultMaxRecordBytes)
    StreamLimits(Option(summary.openShardCount()).map(_.intValue).getOrElse(1), maxRecord)
  }
}
