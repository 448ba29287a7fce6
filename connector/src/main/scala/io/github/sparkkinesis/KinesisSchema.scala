package io.github.sparkkinesis

import org.apache.spark.sql.types._

/** The source's row layout (SPEC §2). The first six columns match the Databricks connector's names, types and positions (jobs that
 * select by position port unchanged); ours come after them. */
object KinesisSchema {
  val PartitionKey = "partitionKey"
  val Data = "data"
  val Stream = "stream"
  val ShardId = "shardId"
  val SequenceNumber = "sequenceNumber"
  val SubSequenceNumber = "subSequenceNumber"
  val ApproximateArrivalTimestamp = "approximateArrivalTimestamp"

  val schema: StructType = StructType(Seq(
    StructField(PartitionKey, StringType, nullable = false),
    StructField(Data, BinaryType, nullable = false),
    StructField(Stream, StringType, nullable = false),
    StructField(ShardId, StringType, nullable = false),
    StructField(SequenceNumber, StringType, nullable = false),
    StructField(ApproximateArrivalTimestamp, TimestampType, nullable = false),
    StructField(SubSequenceNumber, LongType, nullable = false)
  ))
}
