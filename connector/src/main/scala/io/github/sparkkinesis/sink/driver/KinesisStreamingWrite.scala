package io.github.sparkkinesis.sink
package driver

import org.apache.spark.sql.connector.write.{PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import io.github.sparkkinesis.sink.executor.KinesisDataWriterFactory

/**
 * `df.writeStream`: an epoch commits once every task acknowledged its records, so a restart from the checkpoint
 * replays at most the epoch that was in flight (at-least-once; duplicates are possible, loss is not).
 */
final class KinesisStreamingWrite(config: SinkConfig, columns: SinkColumns, progress: SinkProgress)
  extends StreamingWrite {
  // Called for each micro-batch: stream limits are re-learned (through a per-JVM cache), so resharding and a
  // raised maximum record size are picked up without a restart.
  // One ledger for the query's run, keyed by epoch: open until the run aborts an epoch (a rejected row fails the
  // query), otherwise until the session ends — one small endpoint per run.
  private lazy val ledger = RejectionLedger.open()

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new KinesisDataWriterFactory(
      config,
      columns,
      config.streamName.map(StreamLimits.of(config.connection, _)),
      ledger.map(_._1),
      WriterShare.of(info.numPartitions()))

  override def useCommitCoordinator(): Boolean = false

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = progress.committed(messages)

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = ledger.foreach(_._2())
}
