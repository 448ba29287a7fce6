package io.github.sparkkinesis.sink

import java.util

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.DataWriter

/** What the sink uses of Spark 4 that Spark 3.5 lacks (the Spark 3.5 build has its own file of this name). */
private[sink] object SparkLineSink {
  /**
   * Spark reads a task's metrics after the input ends and before `commit`: waiting for the acknowledgements in
   * `writeAll` (Spark 4.0+) makes the records and bytes written (and the retries) in the metrics final.
   */
  trait FlushAfterInput extends DataWriter[InternalRow] {
    protected def flushAll(): Unit

    override def writeAll(rows: util.Iterator[InternalRow]): Unit = {
      while (rows.hasNext) write(rows.next())
      flushAll()
    }
  }
}
