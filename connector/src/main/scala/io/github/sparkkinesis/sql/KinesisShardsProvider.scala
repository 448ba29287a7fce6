package io.github.sparkkinesis.sql

import java.util

import io.github.sparkkinesis.options.{OptionReader, SparkRedaction}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * The data source behind `kinesis_shards`. A table rather than rows computed when the call is resolved: its one task
 * lists the shards each time it runs, so a DataFrame collected again (which Spark does not plan again) or a view
 * queried again sees a reshard, and `EXPLAIN` calls no AWS API.
 */
class KinesisShardsProvider extends TableProvider {
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = ShardRows.schema

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table = {
    SparkRedaction.ensure()
    new KinesisShardsTable(ShardListingRequest(OptionReader(new CaseInsensitiveStringMap(properties))))
  }
}

private final class KinesisShardsTable(request: ShardListingRequest) extends Table with SupportsRead {
  override def name(): String = s"${KinesisFunctions.KinesisShards.name}(${request.streams.mkString(", ")})"
  override def schema(): StructType = ShardRows.schema
  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = () => new KinesisShardsScan(request)
}

private final class KinesisShardsScan(request: ShardListingRequest) extends Scan with Batch {
  override def readSchema(): StructType = ShardRows.schema
  override def description(): String = s"Kinesis shards of ${request.streams.mkString(", ")}"
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = Array(ShardListingPartition(request))
  override def createReaderFactory(): PartitionReaderFactory = ShardListingReaderFactory
}

private final case class ShardListingPartition(request: ShardListingRequest) extends InputPartition

private object ShardListingReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new PartitionReader[InternalRow] {
      private val rows = ShardRows.list(partition.asInstanceOf[ShardListingPartition].request).iterator
      private var current: InternalRow = _
      override def next(): Boolean = rows.hasNext && { current = rows.next(); true }
      override def get(): InternalRow = current
      override def close(): Unit = ()
    }
}
