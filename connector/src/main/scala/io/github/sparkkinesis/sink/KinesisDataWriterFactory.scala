package io.github.sparkkinesis.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory

/** Shipped to the executors; batch and streaming writes build the same writer. */
final class KinesisDataWriterFactory(config: SinkConfig, columns: SinkColumns, limits: Option[StreamLimits])
    extends DataWriterFactory with StreamingDataWriterFactory {

  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new KinesisDataWriter(config, columns, limits)

  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new KinesisDataWriter(config, columns, limits)
}
