package io.github.sparkkinesis.sql

import io.github.sparkkinesis.source.SourceConfig
import io.github.sparkkinesis.KinesisProvider
import io.github.sparkkinesis.options.{KinesisOptions, OptionReader, SparkRedaction}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** A table function of [[io.github.sparkkinesis.KinesisSparkExtensions]]: a data source read with named options. */
sealed abstract class KinesisFunction(val name: String, usage: String, examples: String) {
  /** The data source the call reads: a short name or a provider class. */
  def format: String

  /** Whether `FROM STREAM name(...)` makes sense. */
  def streams: Boolean

  /** The checks the data source makes when a DataFrame is defined, made when the call is resolved. */
  protected def validate(reader: OptionReader): Unit

  /** The options of a batch read of the call (FROM f(...), no STREAM). */
  def batchOptions(options: Map[String, String]): Map[String, String] = options

  def identifier: FunctionIdentifier = FunctionIdentifier(name)

  def info: ExpressionInfo = new ExpressionInfo(
    classOf[KinesisFunction].getName,
    null,
    name,
    usage,
    "",
    s"\n    Examples:\n$examples\n",
    "",
    "",
    "",
    "",
    "")

  /** Spark cannot tell a builder whether the call stands under STREAM: [[ResolveKinesisFunctions]] decides later. */
  def build(arguments: Seq[Expression]): LogicalPlan = {
    SparkRedaction.ensureSqlArguments()
    val options = FunctionArguments.options(name, arguments)
    validate(OptionReader(options))
    KinesisFunctionCall(this, options)
  }
}

object KinesisFunctions {
  object ReadKinesis extends KinesisFunction(
      "read_kinesis",
      "_FUNC_(streamName => name[, option => value ...]) - The records of Kinesis streams, as format(\"kinesis\") " +
        "reads them: the named parameters are its options. A batch read in FROM _FUNC_(...), a streaming read in " +
        "FROM STREAM _FUNC_(...).",
      "      > SELECT partitionKey, CAST(data AS STRING) FROM _FUNC_(streamName => 'orders', initialPosition => 'trim_horizon');\n" +
        "      > SELECT * FROM STREAM _FUNC_(streamName => 'orders', region => 'eu-west-1');"
    ) {
    override def format: String = KinesisProvider.ShortName
    override def streams: Boolean = true
    override protected def validate(reader: OptionReader): Unit = SourceConfig(reader)
    // Databricks documents `latest` as read_kinesis' default, batch reads included: jobs ported from it read
    // what they read there (spark.read.format("kinesis") starts at trim_horizon instead, as Kafka's batch reads).
    override def batchOptions(options: Map[String, String]): Map[String, String] =
      if (OptionReader(options).get(KinesisOptions.InitialPosition).isDefined) options
      else options + (KinesisOptions.InitialPosition.key -> "latest")
  }

  object KinesisShards extends KinesisFunction(
      "kinesis_shards",
      "_FUNC_(streamName => name[, option => value ...]) - One row per shard of Kinesis streams, open and closed: " +
        "id, parents, hash key range, sequence number range, isOpen. Listed (ListShards) when the query runs; " +
        "the parameters are the streams and the connection options of format(\"kinesis\").",
      "      > SELECT shardId, parentShardId, isOpen FROM _FUNC_(streamName => 'orders');"
    ) {
    override def format: String = classOf[KinesisShardsProvider].getName
    override def streams: Boolean = false
    override protected def validate(reader: OptionReader): Unit = ShardListingRequest(reader)
  }

  val all: Seq[KinesisFunction] = Seq(ReadKinesis, KinesisShards)
}
