package io.github.sparkkinesis

import io.github.sparkkinesis.sink.driver.KinesisTableWrites
import io.github.sparkkinesis.source.SourceConfig
import io.github.sparkkinesis.source.driver.KinesisScanBuilder
import java.util

import io.github.sparkkinesis.options.{KinesisOptions, OptionReader, SparkRedaction}
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** Entry point registered as `kinesis`: the source (reads) and the sink ([[KinesisTableWrites]]). */
class KinesisProvider extends TableProvider with DataSourceRegister {
  /** The columns of the rows read (and the sink's stream column) under this provider's short name. */
  protected def layout: RowLayout = RowLayout.Kinesis

  override def shortName(): String = layout.shortName

  // Reads and writes both pass here: it must neither require `streamName` nor call Kinesis.
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = layout.schema

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = {
    // Every read and write passes here before Spark builds a plan that holds (and prints) the options.
    SparkRedaction.ensure()
    // Bad values fail here, when the DataFrame is defined, not later on the query's thread.
    val reader = OptionReader(new CaseInsensitiveStringMap(properties))
    if (reader.get(KinesisOptions.StreamName).isDefined || reader.get(KinesisOptions.StreamARN).isDefined)
      SourceConfig(reader)
    new KinesisTable(schema, layout)
  }
}

object KinesisProvider {
  val ShortName = "kinesis"
}

private[sparkkinesis] class KinesisTable(tableSchema: StructType, layout: RowLayout)
  extends Table with SupportsRead with KinesisTableWrites {
  override def name(): String = layout.shortName
  override def schema(): StructType = tableSchema
  override protected def streamColumn: String = layout.streamColumn
  override def capabilities(): util.Set[TableCapability] = {
    val capabilities = util.EnumSet.of(TableCapability.MICRO_BATCH_READ, TableCapability.BATCH_READ)
    capabilities.addAll(KinesisTableWrites.capabilities)
    capabilities
  }
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = new KinesisScanBuilder(options, layout)
}
