package io.github.sparkkinesis.sink

import org.apache.spark.sql.connector.write.WriterCommitMessage

/** What a writer task reports to the driver when it commits: its acknowledged records and its retries. */
final case class KinesisWriterCommitMessage(
    records: Long,
    bytes: Long,
    throttled: Long,
    retried: Long,
    userRecords: Long = 0L,
    aggregates: Long = 0L) extends WriterCommitMessage
