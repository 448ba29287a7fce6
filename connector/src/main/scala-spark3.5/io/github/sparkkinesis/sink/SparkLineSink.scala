package io.github.sparkkinesis.sink

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.DataWriter

/** The Spark 3.5 build's side of what the sink uses of Spark 4 (the Spark 4 build has its own file of this name). */
private[sink] object SparkLineSink {
  /**
   * Spark 3.5 has no `DataWriter.writeAll`: it reads a task's metrics after the last row, before `commit` waits for
   * the acknowledgements, so a task's custom metrics in the SQL UI may miss the records still in flight then.
   * The commit messages, and so the query's progress, count every record.
   */
  trait FlushAfterInput extends DataWriter[InternalRow] {
    protected def flushAll(): Unit
  }
}
