package io.github.sparkkinesis.sink

import java.util

import org.apache.spark.sql.connector.catalog.{SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}

/**
 * The write side of the `kinesis` table. The input schema is the sink's (SPEC §3), not the source's, so the
 * table accepts any schema and the sink checks the columns it needs itself.
 */
trait KinesisTableWrites extends SupportsWrite {
  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new KinesisWriteBuilder(info)
}

object KinesisTableWrites {
  def capabilities: util.Set[TableCapability] = util.EnumSet.of(
    TableCapability.BATCH_WRITE, TableCapability.STREAMING_WRITE, TableCapability.ACCEPT_ANY_SCHEMA)
}
