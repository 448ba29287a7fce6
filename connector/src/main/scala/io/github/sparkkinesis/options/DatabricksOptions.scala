package io.github.sparkkinesis.options

import java.time.Duration

import io.github.sparkkinesis.options.Handling._
import io.github.sparkkinesis.options.OptionScope._

/**
 * Every option of Databricks' Kinesis connector and what it does here (SPEC §2: honoured, mapped, or refused; never
 * silently ignored). Keys that are also ours are validated by their own rows in [[KinesisOptions]]; the keys only
 * Databricks has are checked by [[check]] when an [[OptionReader]] is built, so a job fails before its query starts.
 * docs/migrating.md's Databricks table is generated from [[all]] (`KinesisOptionsDocSuite` checks it).
 */
object DatabricksOptions {
  /** @param here what the option does in this connector (the docs' text, and for a refusal the message's fix) */
  final case class Entry(key: String, handling: Handling, here: String)

  private def foreign(key: String, doc: String) = KinesisOption(key, None, doc, Source)

  // Keys that only Databricks has; their rows below say what each does here.
  val ServiceCredential = foreign("serviceCredential", "Databricks: a Unity Catalog service credential")
  val MaxPartitions =
    foreign("maxPartitions", "Databricks: how many Spark tasks read the shards (not with shardsPerTask)")
  val RegisteredConsumerIdType =
    foreign("registeredConsumerIdType", "Databricks: name or ARN, how registeredConsumerId names consumers")
  val ConsumerRefreshInterval =
    foreign("consumerRefreshInterval", "Databricks: how often the EFO consumer's registration is checked")
  val CoalesceThresholdBlockSize =
    foreign("coalesceThresholdBlockSize", "Databricks: block size below which prefetched blocks are merged")
  val CoalesceBinSize = foreign("coalesceBinSize", "Databricks: size of merged prefetched blocks")
  val MaxShardsPerDescribe = foreign("maxShardsPerDescribe", "Databricks: most shards listed per API call")
  // Keys of other connectors that jobs moving here carry (not in Databricks' documentation): still understood.
  val AwsUseInstanceProfile = foreign("awsUseInstanceProfile", "Qubole's connector: use the instance profile")
  val AvoidEmptyBatches = foreign("avoidEmptyBatches", "AWS Glue: skip micro-batches without data")
  val ReuseKinesisClient = foreign("reuseKinesisClient", "another connector's: share the Kinesis client")

  private val foreignOptions: Seq[KinesisOption] = Seq(
    ServiceCredential,
    MaxPartitions,
    RegisteredConsumerIdType,
    ConsumerRefreshInterval,
    CoalesceThresholdBlockSize,
    CoalesceBinSize,
    MaxShardsPerDescribe,
    AwsUseInstanceProfile,
    AvoidEmptyBatches,
    ReuseKinesisClient
  )

  private def honoured(o: KinesisOption, here: String = "as ours: see [configuration](configuration.md)") =
    Entry(o.key, Honoured, here)

  private val K = KinesisOptions

  /**
   * The options of Databricks' Kinesis source as docs.databricks.com lists them ("Connect to Amazon Kinesis", "Read
   * Kinesis enhanced fan-out (EFO)", the read_kinesis function's parameters); no writer options are listed there.
   * The last three rows are keys of other connectors (Qubole's, AWS Glue's) that this list once gave as Databricks':
   * jobs carry them, so they keep working as before.
   */
  val all: Seq[Entry] = Seq(
    honoured(K.StreamName),
    honoured(K.StreamARN),
    honoured(K.Region),
    honoured(K.Endpoint),
    honoured(
      K.InitialPosition,
      "latest, trim_horizon, earliest, at_timestamp (with initialTimestamp), and Databricks' " +
        """JSON form {"at_timestamp": "<time>", "format": "<pattern>"} (format optional; see below the table)"""
    ),
    honoured(K.AwsAccessKey),
    honoured(K.AwsSecretKey),
    honoured(K.RoleArn),
    honoured(K.RoleExternalId),
    honoured(K.RoleSessionName, "default spark-kinesis"),
    honoured(K.StsEndpoint),
    Entry(
      ServiceCredential.key,
      Refused,
      "Unity Catalog service credentials exist only on Databricks: give roleArn " +
        "(the IAM role behind the credential, with roleExternalId if its trust policy wants one), awsProfile, or " +
        "awsAccessKey/awsSecretKey, or leave credentials to the AWS default chain"
    ),
    honoured(K.MaxRecordsPerFetch),
    honoured(
      K.MaxFetchRate,
      "at most 2 (MB/s per shard); default adaptive (up to the shard's read quota) instead of 1.0"),
    honoured(
      K.MinFetchPeriod,
      "at least 200ms (Kinesis allows 5 calls per second per shard); default 200ms instead of 400ms"),
    honoured(K.MaxFetchDuration, "how long a snapshot waits for its shards' first answers before a batch is planned"),
    honoured(
      K.FetchBufferSize,
      "default 1/8 of the executor heap instead of 20gb; a value above 1/4 of the heap " +
        "(such as 20gb) is capped there with one INFO line; prefetching pauses when it is full"
    ),
    honoured(
      K.ShardsPerTask,
      "default auto (no more tasks than Spark's default parallelism) instead of 5; not " +
        "together with maxPartitions"),
    Entry(
      MaxPartitions.key,
      Mapped,
      "an integer in 1..100000: the number of tasks that auto sizing aims at instead " +
        "of Spark's default parallelism (each task reads ceil(shards / maxPartitions) shards of a stream, so several " +
        "streams may take a few more tasks); not together with shardsPerTask"
    ),
    honoured(K.ShardFetchInterval),
    Entry(
      MaxShardsPerDescribe.key,
      NoEffect,
      "an integer in 1..10000 (Databricks' default 100); shards are listed " +
        "with ListShards in pages this connector sizes itself, within the API's quota"
    ),
    Entry(
      CoalesceThresholdBlockSize.key,
      NoEffect,
      "a size; records are not kept as Spark blocks here (a task " +
        "reads its shards straight from the executor's prefetch buffer), so there are no small blocks to merge"
    ),
    Entry(CoalesceBinSize.key, NoEffect, "a size; no effect, as for coalesceThresholdBlockSize"),
    honoured(K.ConsumerMode, "polling or efo; enhanced fan-out serves streaming queries, batch reads poll"),
    honoured(
      K.ConsumerName,
      "used as given; Databricks registered its consumers as databricks_<name>: write " +
        "consumerName=databricks_<name> to read through the consumer a Databricks job had (once that job is stopped)"
    ),
    honoured(
      K.ConsumerNamePrefix,
      "default spark-kinesis_ instead of databricks_; put before the name derived " +
        "from the query id only, not before an explicit consumerName"
    ),
    honoured(
      K.RegisteredConsumerId,
      "consumer ARNs, one per stream (comma-separated), or with " +
        "registeredConsumerIdType=name one consumer name looked up on every stream read; never deregistered"
    ),
    Entry(
      RegisteredConsumerIdType.key,
      Mapped,
      "arn (the default here) or name, in any case: how " +
        "registeredConsumerId names the consumers; a name must already be registered on every stream read, or the " +
        "query fails at start"
    ),
    Entry(
      ConsumerRefreshInterval.key,
      NoEffect,
      "a duration (Databricks' default 300s, at most 3600s); consumers " +
        "are looked up (and registered when needed) when the query starts, and a consumer deregistered while it runs " +
        "fails the query instead of being registered again: restarting it registers the consumer anew"
    ),
    honoured(K.RequireConsumerDeregistration),
    honoured(
      K.RegisterConsumerTimeoutInterval,
      "default 300s, as Databricks'; the query fails at start naming this option when it runs out"),
    honoured(
      K.DeregisterConsumerTimeoutInterval,
      "default 300s, as Databricks'; a stopping query logs a WARN when it runs out instead of failing"),
    Entry(
      AwsUseInstanceProfile.key,
      Mapped,
      "not Databricks' (Qubole's connector): true: the AWS default credential " +
        "chain, which ends with the instance profile (keys, awsProfile or roleArn given too still win); false: " +
        "credentials must come from awsAccessKey/awsSecretKey or awsProfile, else the read or write is refused"
    ),
    Entry(
      AvoidEmptyBatches.key,
      NoEffect,
      "not Databricks' (AWS Glue's): true or false; this source never plans a " +
        "micro-batch without records (an idle stream runs no batches), whatever the value"
    ),
    Entry(
      ReuseKinesisClient.key,
      NoEffect,
      "not Databricks': true or false; each executor JVM always shares one " +
        "client per connection configuration")
  )

  private val foreignByLowerKey: Map[String, KinesisOption] = foreignOptions.map(o => o.lowerKey -> o).toMap
  require(foreignOptions.forall(o => KinesisOptions.find(o.key).isEmpty), "a Databricks-only key is also ours")
  require(
    all.filter(_.handling == Honoured).forall(e => KinesisOptions.find(e.key).isDefined),
    "an honoured key is not ours")
  require(
    all.filter(_.handling != Honoured).map(_.key).toSet == foreignOptions.map(_.key).toSet,
    "a Databricks-only key has no row")

  /** A key only Databricks' connector has (matched case-insensitively). */
  def findForeign(key: String): Option[KinesisOption] = foreignByLowerKey.get(key.toLowerCase(java.util.Locale.ROOT))

  def foreignKeys: Seq[KinesisOption] = foreignOptions

  private def entry(o: KinesisOption): Entry = all.find(_.key == o.key).get

  /**
   * Refuses the Databricks-only keys that cannot work here and checks the values of those accepted without effect.
   * The mapped ones are read where they apply (task sizing, credentials, enhanced fan-out).
   */
  private[options] def check(reader: OptionReader): Unit = {
    reader.get(ServiceCredential).foreach { v =>
      throw new KinesisOptionException(s"Option '${ServiceCredential.key}' (value '$v') is Databricks' and not " +
        s"supported here: ${entry(ServiceCredential).here}.")
    }
    if (reader.int(MaxPartitions, 1, MaxPartitionsLimit).isDefined && reader.get(KinesisOptions.ShardsPerTask).isDefined) {
      throw new KinesisOptionException(s"Options '${KinesisOptions.ShardsPerTask.key}' and '${MaxPartitions.key}' " +
        "both size the read tasks (Databricks does not take them together either): keep one.")
    }
    reader.boolean(AwsUseInstanceProfile)
    reader.boolean(AvoidEmptyBatches)
    reader.boolean(ReuseKinesisClient)
    reader.oneOf(RegisteredConsumerIdType, RegisteredConsumerIdTypes)
    reader.duration(ConsumerRefreshInterval, Duration.ofMillis(1))
    reader.bytes(CoalesceThresholdBlockSize, 1, Long.MaxValue)
    reader.bytes(CoalesceBinSize, 1, Long.MaxValue)
    reader.int(MaxShardsPerDescribe, 1, 10000)
  }

  val MaxPartitionsLimit: Int = 100000

  val RegisteredConsumerIdTypes: Seq[String] = Seq("arn", "name")
}
