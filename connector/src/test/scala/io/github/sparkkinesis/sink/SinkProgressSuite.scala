package io.github.sparkkinesis.sink

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.write.WriterCommitMessage
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.sink.driver.SinkProgress

class SinkProgressSuite extends AnyFunSuite {
  test("a streaming query's progress shows the totals of the last committed micro-batch only") {
    val progress = new SinkProgress
    assert(progress.metrics.isEmpty, "nothing before the first commit")
    progress.committed(Array(KinesisWriterCommitMessage(10, 100, 2, 3), KinesisWriterCommitMessage(5, 50, 0, 1)))
    assert(progress.metrics.asScala == Map(
      "recordsWritten" -> "15",
      "bytesWritten" -> "150",
      "throttledRecords" -> "2",
      "retriedRecords" -> "4"))
    progress.committed(Array(KinesisWriterCommitMessage(1, 7, 0, 0), null.asInstanceOf[WriterCommitMessage]))
    assert(progress.metrics.asScala("recordsWritten") == "1", "a task without a message (empty) adds nothing")
  }
}
