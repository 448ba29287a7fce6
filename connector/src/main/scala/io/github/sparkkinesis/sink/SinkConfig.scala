package io.github.sparkkinesis.sink

import io.github.sparkkinesis.client.ConnectionConfig
import io.github.sparkkinesis.options.{KinesisOptions, OptionReader}

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
 * The sink's validated options, read once on the driver and shipped to the writer tasks.
 *
 * @param streamName the `streamName` option; when set it wins over a per-row `stream` column
 */
final case class SinkConfig(
    streamName: Option[String],
    connection: ConnectionConfig,
    maxRecordsPerRequest: Int,
    maxBytesPerRequest: Long,
    maxInFlightRequests: Int,
    preserveKeyOrder: Boolean,
    clusterByPartitionKey: Boolean,
    flowControl: FlowControlMode)

object SinkConfig {
  /** The PutRecords API's own limits (2025 and later). */
  val ApiMaxRecordsPerRequest = 500
  val ApiMaxBytesPerRequest: Long = 10L * 1024 * 1024

  def apply(reader: OptionReader): SinkConfig = {
    import KinesisOptions._
    val stream = reader.get(StreamName).map { value =>
      reader.streamNames match {
        case Seq(one) => one
        case _ => reader.fail(StreamName, value,
          "one stream name: the sink writes to one stream (route rows to several with a 'stream' column instead)")
      }
    }
    SinkConfig(
      streamName = stream,
      connection = reader.connection,
      maxRecordsPerRequest = reader.int(MaxRecordsPerRequest, 1, ApiMaxRecordsPerRequest).getOrElse(ApiMaxRecordsPerRequest),
      maxBytesPerRequest = reader.bytes(MaxBytesPerRequest, 1024, ApiMaxBytesPerRequest).getOrElse(ApiMaxBytesPerRequest),
      maxInFlightRequests = reader.int(MaxInFlightRequests, 1, 64).getOrElse(4),
      preserveKeyOrder = reader.boolean(PreserveKeyOrder).getOrElse(false),
      clusterByPartitionKey = reader.boolean(ClusterByPartitionKey).getOrElse(false),
      flowControl = reader.oneOf(FlowControl, FlowControlMode.names).map(FlowControlMode.parse)
        .getOrElse(FlowControlMode.Adaptive))
  }
}
