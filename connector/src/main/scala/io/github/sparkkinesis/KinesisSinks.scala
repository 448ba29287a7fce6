package io.github.sparkkinesis

import java.util

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.options.{KinesisOption, KinesisOptions, OptionReader}
import io.github.sparkkinesis.sink.{SinkColumns, SinkConfig}
import org.apache.spark.sql.{Column, DataFrame, DataFrameWriter, Row, SaveMode}
import org.apache.spark.sql.streaming.DataStreamWriter

/**
 * The sink's builder (SPEC §4):
 * {{{
 *   KinesisSinks.kinesis("events").withRegion("eu-west-1").build(df)             // df has data, partitionKey
 *   KinesisSinks.kinesis("events", col("user_id"), to_json(struct("*"))).build(df) // key and data as expressions
 * }}}
 * Every `with...` method sets one option of the table in [[options.KinesisOptions]]; `options()` is exactly the
 * map `build` applies. Builders are immutable: each method returns a new one.
 */
object KinesisSinks {
  /** Writes `df`'s `data`, `partitionKey` (and optional `explicitHashKey`) columns to `streamName`. */
  def kinesis(streamName: String): KinesisSinkBuilder =
    new KinesisSinkBuilder(Map(KinesisOptions.StreamName.key -> streamName), None)

  /**
   * Writes `valueColumn` (string or binary) as the data and `keyColumn` (cast to string) as the partition key of
   * each row of the DataFrame given to `build`, e.g. `col("user_id")` and `to_json(struct("*"))`.
   */
  def kinesis(streamName: String, keyColumn: Column, valueColumn: Column): KinesisSinkBuilder =
    new KinesisSinkBuilder(Map(KinesisOptions.StreamName.key -> streamName), Some((keyColumn, valueColumn)))
}

final class KinesisSinkBuilder private[sparkkinesis] (
    protected val settings: Map[String, String],
    keyAndValue: Option[(Column, Column)]) extends KinesisBuilder[KinesisSinkBuilder] {
  import KinesisOptions._

  override protected def updated(settings: Map[String, String]): KinesisSinkBuilder =
    new KinesisSinkBuilder(settings, keyAndValue)

  def withMaxRecordsPerRequest(records: Int): KinesisSinkBuilder = set(MaxRecordsPerRequest, records)
  def withMaxBytesPerRequest(bytes: Long): KinesisSinkBuilder = set(MaxBytesPerRequest, bytes)
  def withMaxInFlightRequests(requests: Int): KinesisSinkBuilder = set(MaxInFlightRequests, requests)
  def withPreserveKeyOrder(preserve: Boolean): KinesisSinkBuilder = set(PreserveKeyOrder, preserve)
  def withClusterByPartitionKey(cluster: Boolean): KinesisSinkBuilder = set(ClusterByPartitionKey, cluster)

  /** `adaptive` (the default: each throttling shard paced at its own send rate), `ladder`, `aimd` or `off`. */
  def withFlowControl(mode: String): KinesisSinkBuilder = set(FlowControl, mode)

  /**
   * `aggregation=kpl`: user records packed per shard into KPL aggregates (for many small records: a shard then
   * takes up to its byte quota instead of 1000 records/s). Readers must de-aggregate: this connector's source,
   * KCL, `aws-kinesis-agg`.
   *
   * @param maxBytes   largest aggregate, partition key included (`aggregationMaxBytes`)
   * @param maxRecords most user records in one aggregate (`aggregationMaxRecords`)
   * @param lingerMs   the longest a user record waits for company before it is sent (`aggregationLingerMs`)
   */
  def withAggregation(maxBytes: Long, maxRecords: Int, lingerMs: Int): KinesisSinkBuilder =
    withAggregation().set(AggregationMaxBytes, maxBytes).set(AggregationMaxRecords, maxRecords)
      .set(AggregationLingerMs, lingerMs)

  /** `aggregation=kpl` with the default limits (50 KiB, 10000 records, 100 ms). */
  def withAggregation(): KinesisSinkBuilder = set(Aggregation, "kpl")

  /**
   * A configured `DataStreamWriter` for a streaming DataFrame, a `DataFrameWriter` (in append mode) for a batch
   * one. Options and input columns are checked here, before any query starts; `buildStreaming` and `buildBatch`
   * give the same result with its type.
   */
  def build(df: DataFrame): AnyRef = if (df.isStreaming) buildStreaming(df) else buildBatch(df)

  def buildStreaming(df: DataFrame): DataStreamWriter[Row] = {
    require(df.isStreaming, "buildStreaming needs a streaming DataFrame; use buildBatch (or build) for a batch one")
    prepare(df).writeStream.format(KinesisProvider.ShortName).options(settings)
  }

  def buildBatch(df: DataFrame): DataFrameWriter[Row] = {
    require(!df.isStreaming, "buildBatch needs a batch DataFrame; use buildStreaming (or build) for a streaming one")
    prepare(df).write.format(KinesisProvider.ShortName).mode(SaveMode.Append).options(settings)
  }

  private def prepare(df: DataFrame): DataFrame = {
    val input = keyAndValue match {
      case Some((key, value)) =>
        df.select(key.cast("string").as(KinesisSchema.PartitionKey), value.as(KinesisSchema.Data))
      case None => df
    }
    val config = SinkConfig(OptionReader.forSink(settings))
    SinkColumns.of(input.schema, config.streamName.isDefined)
    input
  }

}
