package io.github.sparkkinesis

/**
 * Registered as `aws-kinesis`, the AWS Labs `spark-sql-kinesis-connector`'s format name (bundled with EMR): the same
 * source and sink, with that connector's columns (`data`, `streamName`, `partitionKey`, `sequenceNumber`,
 * `approximateArrivalTimestamp`), so its jobs run with the jar swapped. With both jars on the class path Spark picks
 * the AWS Labs class (it prefers a provider under org.apache.spark) and only logs a WARN: docs/reading.md says so.
 */
class AwsKinesisProvider extends KinesisProvider {
  override protected def layout: RowLayout = RowLayout.AwsKinesis
}

object AwsKinesisProvider {
  val ShortName = "aws-kinesis"
}
