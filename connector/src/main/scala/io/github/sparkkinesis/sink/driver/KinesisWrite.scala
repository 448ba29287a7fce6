package io.github.sparkkinesis.sink
package driver

import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expression, Expressions, SortOrder}
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.{BatchWrite, RequiresDistributionAndOrdering}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite

/**
 * A planned write. With `clusterByPartitionKey` it asks Spark to cluster the input by partition key (a shuffle),
 * so all records of one key pass through one writer task and keep the order they had within their input
 * partition; by default the input is written where it is.
 */
final class KinesisWrite(config: SinkConfig, columns: SinkColumns, partitionKeyColumn: String, progress: SinkProgress)
  extends RequiresDistributionAndOrdering {

  override def description(): String = s"Kinesis(${config.streamName.getOrElse("per-row stream")})"

  override def requiredDistribution(): Distribution =
    if (config.clusterByPartitionKey) Distributions.clustered(Array[Expression](Expressions.column(partitionKeyColumn)))
    else Distributions.unspecified()

  override def requiredOrdering(): Array[SortOrder] = Array.empty

  override def toBatch: BatchWrite = new KinesisBatchWrite(config, columns)

  override def toStreaming: StreamingWrite = new KinesisStreamingWrite(config, columns, progress)

  override def supportedCustomMetrics(): Array[CustomMetric] = SinkMetrics.supported
}
