package io.github.sparkkinesis.sink
package driver

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import io.github.sparkkinesis.sink.executor.KinesisDataWriterFactory

/**
 * `df.write`: each task commits only after Kinesis acknowledged all its records. There is nothing to undo on
 * abort: what was acknowledged stays in the stream (at-least-once), and a retried task writes its records again.
 */
final class KinesisBatchWrite(config: SinkConfig, columns: SinkColumns) extends BatchWrite {
  private lazy val ledger = RejectionLedger.open()

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new KinesisDataWriterFactory(
      config,
      columns,
      config.streamName.map(StreamLimits.of(config.connection, _)),
      ledger.map(_._1),
      WriterShare.of(info.numPartitions()))

  // Tasks share nothing to coordinate: a second attempt of a task just writes its records again.
  override def useCommitCoordinator(): Boolean = false

  override def commit(messages: Array[WriterCommitMessage]): Unit = ledger.foreach(_._2())

  override def abort(messages: Array[WriterCommitMessage]): Unit = ledger.foreach(_._2())
}
