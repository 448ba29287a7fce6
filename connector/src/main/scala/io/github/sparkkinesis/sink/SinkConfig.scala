package io.github.sparkkinesis.sink

import io.github.sparkkinesis.client.ConnectionConfig
import io.github.sparkkinesis.options.{KinesisOptionException, KinesisOptions, OptionReader}

/** How the sink adapts to throttling; see [[FlowController]]. */
sealed trait FlowControlMode extends Serializable
object FlowControlMode {
  case object Adaptive extends FlowControlMode
  case object Ladder extends FlowControlMode
  case object Aimd extends FlowControlMode
  case object Off extends FlowControlMode

  val names: Seq[String] = Seq("adaptive", "ladder", "aimd", "off")

  def parse(name: String): FlowControlMode = name.toLowerCase(java.util.Locale.ROOT) match {
    case "adaptive" => Adaptive
    case "ladder" => Ladder
    case "aimd" => Aimd
    case "off" => Off
  }
}

/**
 * `aggregation=kpl`'s limits; see [[ShardAggregator]].
 *
 * @param maxBytes largest aggregate, its partition key included (the stream's maximum record size caps it too)
 */
final case class AggregationConfig(maxBytes: Long, maxRecords: Int, lingerMs: Int)

object AggregationConfig {
  val Modes: Seq[String] = Seq("none", "kpl")
  val DefaultMaxBytes: Long = 50L * 1024
  val DefaultMaxRecords = 10000
  val DefaultLingerMs = 100
}

/**
 * The sink's validated options, read once on the driver and shipped to the writer tasks.
 *
 * @param streamName the `streamName` option, or `streamARN`'s ARN (requests then name the stream by its ARN); when
 *                   set it wins over a per-row `stream` column
 */
final case class SinkConfig(
    streamName: Option[String],
    connection: ConnectionConfig,
    maxRecordsPerRequest: Int,
    maxBytesPerRequest: Long,
    maxInFlightRequests: Int,
    preserveKeyOrder: Boolean,
    clusterByPartitionKey: Boolean,
    flowControl: FlowControlMode,
    aggregation: Option[AggregationConfig] = None)

object SinkConfig {
  /** The PutRecords API's own limits (2025 and later). */
  val ApiMaxRecordsPerRequest = 500
  val ApiMaxBytesPerRequest: Long = 10L * 1024 * 1024

  def apply(reader: OptionReader): SinkConfig = {
    import KinesisOptions._
    // streamARN names the stream too (the source's options reused for the sink), and is written to by ARN: a
    // stream of another account is reached only so.
    val named = if (reader.get(StreamName).isDefined) Some(StreamName) else reader.get(StreamARN).map(_ => StreamARN)
    val stream = named.map { option =>
      reader.streamNames match {
        case Seq(one) => reader.streamArns.getOrElse(one, one)
        case _ =>
          val what = if (option == StreamName) "name" else "ARN"
          reader.fail(
            option,
            reader.get(option).get,
            s"one stream $what: the sink writes to one stream (route rows " +
              "to several with a 'stream' column instead)")
      }
    }
    val maxBytesPerRequest =
      reader.bytes(MaxBytesPerRequest, 1024, ApiMaxBytesPerRequest).getOrElse(ApiMaxBytesPerRequest)
    SinkConfig(
      streamName = stream,
      connection = reader.connection,
      maxRecordsPerRequest =
        reader.int(MaxRecordsPerRequest, 1, ApiMaxRecordsPerRequest).getOrElse(ApiMaxRecordsPerRequest),
      maxBytesPerRequest = maxBytesPerRequest,
      maxInFlightRequests = reader.int(MaxInFlightRequests, 1, 64).getOrElse(4),
      preserveKeyOrder = reader.boolean(PreserveKeyOrder).getOrElse(false),
      clusterByPartitionKey = reader.boolean(ClusterByPartitionKey).getOrElse(false),
      flowControl = reader.oneOf(FlowControl, FlowControlMode.names).map(FlowControlMode.parse)
        .getOrElse(FlowControlMode.Adaptive),
      aggregation = aggregation(reader, maxBytesPerRequest)
    )
  }

  private def aggregation(reader: OptionReader, maxBytesPerRequest: Long): Option[AggregationConfig] = {
    import AggregationConfig._
    import KinesisOptions._
    val limits = Seq(AggregationMaxBytes, AggregationMaxRecords, AggregationLingerMs)
    reader.oneOf(Aggregation, Modes).map(_.toLowerCase(java.util.Locale.ROOT)).getOrElse("none") match {
      case "kpl" =>
        // The aggregate is one record of a request: a larger limit could never be used.
        val maxBytes = reader.bytes(AggregationMaxBytes, 1024, ApiMaxBytesPerRequest) match {
          case Some(n) if n > maxBytesPerRequest =>
            reader.fail(
              AggregationMaxBytes,
              reader.get(AggregationMaxBytes).get,
              s"at most maxBytesPerRequest ($maxBytesPerRequest bytes): an aggregate travels in one request"
            )
          case Some(n) => n
          case None => math.min(DefaultMaxBytes, maxBytesPerRequest)
        }
        Some(AggregationConfig(
          maxBytes = maxBytes,
          maxRecords = reader.int(AggregationMaxRecords, 1, 1000000).getOrElse(DefaultMaxRecords),
          lingerMs = reader.int(AggregationLingerMs, 1, 60000).getOrElse(DefaultLingerMs)
        ))
      case _ =>
        limits.find(o => reader.get(o).isDefined).foreach { o =>
          throw new KinesisOptionException(
            s"Option '${o.key}' only applies with 'aggregation' set to 'kpl': set aggregation=kpl or remove it.")
        }
        None
    }
  }
}
