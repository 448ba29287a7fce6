package io.github.sparkkinesis

import java.util

import org.apache.spark.sql.connector.catalog.{Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * Entry point registered as `kinesis`. Reading and writing are added by the source and sink; until then the
 * table advertises no capability, so Spark reports the operation as unsupported instead of failing obscurely.
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

private[sparkkinesis] class KinesisTable(tableSchema: StructType) extends Table {
  override def name(): String = "kinesis"
  override def schema(): StructType = tableSchema
  override def capabilities(): util.Set[TableCapability] = util.EnumSet.noneOf(classOf[TableCapability])
}
