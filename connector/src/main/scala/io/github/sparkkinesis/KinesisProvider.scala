package io.github.sparkkinesis

import java.util

import io.github.sparkkinesis.sink.KinesisTableWrites
import org.apache.spark.sql.connector.catalog.{Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * Entry point registered as `kinesis`. The table advertises only what is built (writing: [[KinesisTableWrites]]),
 * so Spark reports anything else as unsupported instead of failing obscurely.
 */
class KinesisProvider extends TableProvider with DataSourceRegister {
  override def shortName(): String = KinesisProvider.ShortName

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = KinesisSchema.schema

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = new KinesisTable(schema)
}

object KinesisProvider {
  val ShortName = "kinesis"
}

private[sparkkinesis] class KinesisTable(tableSchema: StructType) extends Table with KinesisTableWrites {
  override def name(): String = "kinesis"
  override def schema(): StructType = tableSchema
  override def capabilities(): util.Set[TableCapability] = {
    val capabilities = util.EnumSet.noneOf(classOf[TableCapability])
    capabilities.addAll(KinesisTableWrites.capabilities)
    capabilities
  }
}
