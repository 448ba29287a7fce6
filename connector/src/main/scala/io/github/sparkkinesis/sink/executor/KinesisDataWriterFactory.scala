package io.github.sparkkinesis.sink
package executor

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory

/**
 * Shipped to the executors; batch and streaming writes build the same writer. `writerShare`: the share of each
 * shard's write quota an executor's pace starts at, when several executors write at once ([[driver.WriterShare]]).
 */
final class KinesisDataWriterFactory(
    config: SinkConfig,
    columns: SinkColumns,
    limits: Option[StreamLimits],
    ledger: Option[RejectionLedger] = None,
    writerShare: Option[Double] = None) extends DataWriterFactory with StreamingDataWriterFactory {

  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] = writer(partitionId, 0L)

  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    writer(partitionId, epochId)

  private def writer(partition: Int, epoch: Long): DataWriter[InternalRow] = {
    ledger.flatMap(_.rejectedBefore(partition, epoch)).foreach(m => throw SinkErrors.rejectedBefore(m))
    new KinesisDataWriter(
      config,
      columns,
      limits,
      message => ledger.foreach(_.record(partition, epoch, message)),
      writerShare)
  }
}
