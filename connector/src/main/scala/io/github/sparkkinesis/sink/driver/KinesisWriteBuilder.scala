package io.github.sparkkinesis.sink
package driver

import io.github.sparkkinesis.options.OptionReader
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend

/**
 * Reads the options and checks the input schema before anything is sent.
 *
 * Kinesis has nothing to truncate: in the complete output mode of a streaming query each micro-batch appends the
 * whole result as records, as Spark's Kafka sink does. Likewise in the update output mode (which real-time mode
 * requires) each updated row is appended as a record.
 */
final class KinesisWriteBuilder(info: LogicalWriteInfo, progress: SinkProgress, streamColumn: String)
  extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {

  override def truncate(): WriteBuilder = this

  override def build(): Write = {
    val config = SinkConfig(OptionReader.forSink(info.options()))
    val columns = SinkColumns.of(info.schema(), config.streamName.isDefined, streamColumn)
    new KinesisWrite(config, columns, info.schema().fields(columns.partitionKey).name, progress)
  }
}
