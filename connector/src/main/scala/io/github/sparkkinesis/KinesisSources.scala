package io.github.sparkkinesis

import io.github.sparkkinesis.source.SourceConfig
import java.time.Instant

import io.github.sparkkinesis.options.{KinesisOptions, OptionReader}
import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * The source's builder (SPEC §4):
 * {{{
 *   val events = KinesisSources.kinesis("clicks").withRegion("eu-west-1").withInitialPosition("trim_horizon").build(spark)
 * }}}
 * Options are validated when `build` is called, with the same messages as `spark.readStream.option(...)`.
 */
object KinesisSources {
  def kinesis(streamName: String): KinesisSourceBuilder =
    new KinesisSourceBuilder(Map(KinesisOptions.StreamName.key -> streamName))
}

final class KinesisSourceBuilder private[sparkkinesis] (protected val settings: Map[String, String])
  extends KinesisBuilder[KinesisSourceBuilder] {
  import KinesisOptions._

  override protected def updated(settings: Map[String, String]): KinesisSourceBuilder =
    new KinesisSourceBuilder(settings)

  /**
   * `latest` (the default), `trim_horizon`, `earliest`, Databricks' `{"at_timestamp": ..., "format": ...}`, or a JSON
   * map of per-shard positions.
   */
  def withInitialPosition(position: String): KinesisSourceBuilder = set(InitialPosition, position)

  /** Start at the records that arrived at or after `timestamp`. */
  def withInitialTimestamp(timestamp: Instant): KinesisSourceBuilder =
    set(InitialPosition, "at_timestamp").set(InitialTimestamp, timestamp.toEpochMilli)

  def withInitialTimestamp(epochMillis: Long): KinesisSourceBuilder =
    withInitialTimestamp(Instant.ofEpochMilli(epochMillis))

  def withMaxRecordsPerFetch(records: Int): KinesisSourceBuilder = set(MaxRecordsPerFetch, records)
  def withMaxFetchRate(megabytesPerSecond: Double): KinesisSourceBuilder = set(MaxFetchRate, megabytesPerSecond)
  /** Durations in Spark's syntax: `200ms`, `10s`, `1min`. */
  def withMinFetchPeriod(period: String): KinesisSourceBuilder = set(MinFetchPeriod, period)
  def withMaxFetchDuration(duration: String): KinesisSourceBuilder = set(MaxFetchDuration, duration)
  def withMaxRecordsPerTrigger(records: Long): KinesisSourceBuilder = set(MaxRecordsPerTrigger, records)
  /** At most this many records of any one shard per micro-batch (the AWS Labs and Qubole connectors' maxFetchRecordsPerShard). */
  def withMaxRecordsPerShardPerTrigger(records: Long): KinesisSourceBuilder = set(MaxRecordsPerShardPerTrigger, records)
  def withMaxBytesPerTrigger(bytes: Long): KinesisSourceBuilder = set(MaxBytesPerTrigger, bytes)
  /** The fewest records a micro-batch waits for, at most `maxTriggerDelay` (Kafka's minOffsetsPerTrigger). */
  def withMinRecordsPerTrigger(records: Long): KinesisSourceBuilder = set(MinRecordsPerTrigger, records)
  /** With `minRecordsPerTrigger`: the longest a batch is held back, e.g. "15m" (the default) or "30s". */
  def withMaxTriggerDelay(delay: String): KinesisSourceBuilder = set(MaxTriggerDelay, delay)
  def withShardsPerTask(shards: Int): KinesisSourceBuilder = set(ShardsPerTask, shards)
  def withShardFetchInterval(interval: String): KinesisSourceBuilder = set(ShardFetchInterval, interval)
  def withFailOnDataLoss(fail: Boolean): KinesisSourceBuilder = set(FailOnDataLoss, fail)
  /** Bytes of prefetched records one executor may hold, in Spark's size syntax: `256m`, `1g`. */
  def withFetchBufferSize(size: String): KinesisSourceBuilder = set(FetchBufferSize, size)
  /** The longest an idle shard goes unpolled, e.g. "10s" (the default); "1s" polls every idle shard every second. */
  def withMaxIdlePollInterval(interval: String): KinesisSourceBuilder = set(MaxIdlePollInterval, interval)

  /** Read with enhanced fan-out (`consumerMode=efo`) through a consumer named after the query, registered if missing. */
  def withEnhancedFanOut(): KinesisSourceBuilder = set(ConsumerMode, "efo")
  /** Read with enhanced fan-out through the consumer `consumerName` on each stream, registered if missing. */
  def withEnhancedFanOut(consumerName: String): KinesisSourceBuilder =
    withEnhancedFanOut().set(ConsumerName, consumerName)
  /** Deregister the enhanced fan-out consumer the query registered when it stops (default: keep it for restarts). */
  def withRequireConsumerDeregistration(deregister: Boolean): KinesisSourceBuilder =
    set(RequireConsumerDeregistration, deregister)

  /** A streaming DataFrame of the source schema. */
  def build(spark: SparkSession): DataFrame = {
    SourceConfig(OptionReader(settings))
    spark.readStream.format(KinesisProvider.ShortName).options(settings).load()
  }

  /** The same as [[build]], named as the sink builder's `buildStreaming` is. */
  def buildStreaming(spark: SparkSession): DataFrame = build(spark)

  /** A batch DataFrame: the records from the initial position up to the tip when the read is planned. */
  def buildBatch(spark: SparkSession): DataFrame = {
    SourceConfig(OptionReader(settings))
    spark.read.format(KinesisProvider.ShortName).options(settings).load()
  }
}
