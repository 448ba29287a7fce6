package io.github.sparkkinesis

import org.apache.spark.sql.types._

/**
 * The columns of the source's rows, chosen by the format name: ours for `kinesis` ([[KinesisSchema]]), the AWS Labs
 * connector's for `aws-kinesis`, so that its jobs select what they selected before. The sink reads its per-row
 * target stream from the layout's stream column.
 *
 * Each ordinal is where that value goes in a row, or -1 when the layout has no such column: the partition reader
 * fills rows by ordinal, whatever the layout.
 */
final case class RowLayout(shortName: String, schema: StructType, streamColumn: String) {
  private def at(name: String): Int = schema.fieldNames.indexOf(name)

  val partitionKey: Int = at(KinesisSchema.PartitionKey)
  val data: Int = at(KinesisSchema.Data)
  val stream: Int = at(streamColumn)
  val shardId: Int = at(KinesisSchema.ShardId)
  val sequenceNumber: Int = at(KinesisSchema.SequenceNumber)
  val approximateArrivalTimestamp: Int = at(KinesisSchema.ApproximateArrivalTimestamp)
  val subSequenceNumber: Int = at(KinesisSchema.SubSequenceNumber)
}

object RowLayout {
  val Kinesis: RowLayout = RowLayout(KinesisProvider.ShortName, KinesisSchema.schema, KinesisSchema.Stream)

  /** The AWS Labs `spark-sql-kinesis-connector`'s stream column. */
  val AwsStreamName = "streamName"

  /**
   * The AWS Labs connector's columns, in its order, nullable as it declares them (a job comparing or persisting the
   * schema sees the same one). No shard id and no sub-sequence number: it has neither.
   */
  val AwsKinesisSchema: StructType = StructType(Seq(
    StructField(KinesisSchema.Data, BinaryType),
    StructField(AwsStreamName, StringType),
    StructField(KinesisSchema.PartitionKey, StringType),
    StructField(KinesisSchema.SequenceNumber, StringType),
    StructField(KinesisSchema.ApproximateArrivalTimestamp, TimestampType)
  ))

  val AwsKinesis: RowLayout = RowLayout(AwsKinesisProvider.ShortName, AwsKinesisSchema, AwsStreamName)
}
