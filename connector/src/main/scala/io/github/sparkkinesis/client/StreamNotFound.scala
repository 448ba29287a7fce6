package io.github.sparkkinesis.client

/** The one wording of "the stream does not exist" (SPEC §5), for the source and the sink alike. */
object StreamNotFound {
  def message(stream: String, connection: ConnectionConfig): String =
    s"Kinesis stream '$stream' not found in region ${KinesisClientFactory.resolveRegion(connection).id()} " +
      s"(endpoint ${connection.endpoint.map(_.toString).getOrElse("default")})"
}
