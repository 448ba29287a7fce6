package io.github.sparkkinesis.sink

import io.github.sparkkinesis.KinesisSchema
import org.apache.spark.sql.types._

/**
 * Where the sink finds each input column in a row (SPEC §3). Columns it does not know are ignored, so a
 * DataFrame read with the source (which also carries shardId, sequenceNumber, ...) can be written back unchanged.
 *
 * @param dataIsBinary `data` is binary (sent as is) rather than a string (sent as its UTF-8 bytes)
 * @param stream ordinal of the per-row stream column, used only when the `streamName` option is not set
 * @param streamColumn that column's name: `stream`, or `streamName` under `aws-kinesis`
 */
final case class SinkColumns(
    data: Int,
    dataIsBinary: Boolean,
    partitionKey: Int,
    explicitHashKey: Option[Int],
    stream: Option[Int],
    streamColumn: String = KinesisSchema.Stream)

object SinkColumns {
  val ExplicitHashKey = "explicitHashKey"

  /**
   * Checks the input schema before anything is sent; every problem names the column and the expected type.
   * Names match case-insensitively, like Spark's default resolver.
   *
   * @param streamColumn the column naming each row's stream: the source's under the same format name
   */
  def of(schema: StructType, streamNameSet: Boolean, streamColumn: String = KinesisSchema.Stream): SinkColumns = {
    def find(name: String): Option[(StructField, Int)] =
      schema.fields.zipWithIndex.find(_._1.name == name)
        .orElse(schema.fields.zipWithIndex.find(_._1.name.equalsIgnoreCase(name)))

    def found = schema.fields.map(f => s"${f.name} ${f.dataType.simpleString}").mkString(", ")

    def required(name: String, expected: String): (StructField, Int) = find(name).getOrElse(
      throw SinkErrors.schema(s"the input has no '$name' column; the sink needs '$name' of type $expected " +
        s"(input columns: $found)"))

    def typed(field: StructField, expected: String, accepted: DataType*): Unit =
      if (!accepted.contains(field.dataType)) {
        throw SinkErrors.schema(s"column '${field.name}' has type ${field.dataType.simpleString}; expected $expected")
      }

    val (dataField, dataIndex) = required(KinesisSchema.Data, "binary or string")
    typed(dataField, "binary or string", BinaryType, StringType)
    val (keyField, keyIndex) = required(KinesisSchema.PartitionKey, "string")
    typed(keyField, "string", StringType)
    val hashKey = find(ExplicitHashKey).map { case (f, i) =>
      typed(f, "string (a decimal 128-bit hash key)", StringType); i
    }
    val stream = if (streamNameSet) None
    else {
      val (f, i) = find(streamColumn).getOrElse(throw SinkErrors.schema(
        s"no target stream: set the 'streamName' option or give the input a '$streamColumn' column of " +
          s"type string (a stream name or ARN; input columns: $found)"))
      typed(f, "string", StringType)
      Some(i)
    }
    SinkColumns(dataIndex, dataField.dataType == BinaryType, keyIndex, hashKey, stream, streamColumn)
  }
}
