package io.github.sparkkinesis.sink

import io.github.sparkkinesis.options.OptionReader
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}

/**
 * Reads the options and checks the input schema before anything is sent.
 *
 * Kinesis has nothing to truncate: in the complete output mode of a streaming query each micro-batch appends the
 * whole result as records, as Spark's Kafka sink does.
 */
final class KinesisWriteBuilder(info: LogicalWriteInfo, progress: SinkProgress)
    extends WriteBuilder with SupportsTruncate {

  override def truncate(): WriteBuilder = this

  override def build(): Write = {
    val config = SinkConfig(OptionReader(info.options()))
    val columns = SinkColumns.of(info.schema(), config.streamName.isDefined)
    new KinesisWrite(config, columns, info.schema().fields(columns.partitionKey).name, progress)
  }
}
