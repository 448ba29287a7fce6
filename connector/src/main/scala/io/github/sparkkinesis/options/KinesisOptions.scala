package io.github.sparkkinesis.options

import io.github.sparkkinesis.options.OptionScope._

/**
 * The table of every option (SPEC §2 and §3). Validation, the builders' `options()` and docs/configuration.md's option table
 * are all driven by it; `KinesisOptionsDocSuite` fails when that page misses a row.
 */
object KinesisOptions {
  private def opt(key: String, default: String, doc: String, scope: OptionScope = Both, secret: Boolean = false) =
    KinesisOption(key, Option(default).filter(_.nonEmpty), doc, scope, secret)

  // Where and as whom.
  val StreamName =
    opt("streamName", "required (or streamARN)", "stream to read or write; a comma-separated list reads several streams")
  val StreamARN = opt(
    "streamARN",
    null,
    "the streams' ARNs instead of (or matching) streamName, comma-separated; the source then names them by ARN in its calls (a stream of another account, through its resource policy), the sink writes by name"
  )
  val Region = opt("region", "AWS default region chain, else us-east-1", "AWS region")
  val Endpoint = opt("endpoint", "the region's endpoint", "custom endpoint URL (emulators, VPC endpoints, proxies)")
  val AwsAccessKey = opt("awsAccessKey", null, "static credentials: access key id", secret = true)
  val AwsSecretKey = opt("awsSecretKey", null, "static credentials: secret key", secret = true)
  val AwsSessionToken = opt("awsSessionToken", null, "static credentials: session token", secret = true)
  val RoleArn = opt("roleArn", null, "IAM role to assume with STS (cross-account)")
  val RoleExternalId = opt("roleExternalId", null, "external id for the assumed role", secret = true)
  val RoleSessionName = opt("roleSessionName", "spark-kinesis", "session name for the assumed role")
  val StsEndpoint = opt("stsEndpoint", "the region's STS endpoint", "custom STS endpoint URL")
  val AwsProfile = opt("awsProfile", null, "named profile from the AWS config files")

  // Retries and timeouts, shared by source and sink.
  val RetryMaxAttempts =
    opt("retryMaxAttempts", "unlimited", "attempts per call for retryable failures (throttling, 5xx, network, timeouts)")
  val RetryInitialBackoff =
    opt("retryInitialBackoff", "100ms", "first backoff of the exponential retry with full jitter")
  val RetryMaxBackoff = opt("retryMaxBackoff", "3s", "largest backoff between two attempts")
  val ApiCallTimeout =
    opt("apiCallTimeout", "none (bounded by the retry policy)", "time for one API call including its retries")
  val ApiCallAttemptTimeout =
    opt("apiCallAttemptTimeout", "30s", "time for one HTTP attempt, also the socket read timeout")
  val ConnectTimeout = opt("connectTimeout", "10s", "time to open a connection")

  // HTTP proxy, for every client (source, sink, STS).
  val ProxyHost = opt(
    "proxyHost",
    "the JVM's https.proxyHost (http.proxyHost for an http endpoint)",
    "HTTP proxy every call goes through (source, sink, STS): a host name or IP address, with proxyPort; calls to https endpoints tunnel through it (CONNECT)"
  )
  val ProxyPort = opt("proxyPort", "required with proxyHost", "the proxy's port (1..65535)")
  val ProxyUsername =
    opt("proxyUsername", null, "user name for the proxy's Basic authentication (with proxyPassword)")
  val ProxyPassword =
    opt("proxyPassword", null, "password for the proxy's Basic authentication (with proxyUsername)", secret = true)
  val NonProxyHosts = opt(
    "nonProxyHosts",
    "none with proxyHost; else the JVM's http.nonProxyHosts (unset: loopback, as the JDK)",
    "hosts called directly, not through the proxy: patterns separated by commas (or vertical bars, as http.nonProxyHosts), * standing for any characters, e.g. *.internal,10.*"
  )

  // Source.
  val InitialPosition = opt(
    "initialPosition",
    "latest",
    "where a new query starts (a batch read without it starts at trim_horizon, as Kafka's; read_kinesis at latest, as Databricks'): latest, trim_horizon, earliest, at_timestamp, Databricks' JSON {\"at_timestamp\": ..., \"format\": ...}, or a JSON map of per-shard positions (sequence numbers, or at_timestamp per shard)",
    Source
  )
  val InitialTimestamp =
    opt("initialTimestamp", null, "with initialPosition=at_timestamp: ISO-8601 or epoch millis", Source)
  val EndingPosition = opt(
    "endingPosition",
    "latest",
    "where a bounded read (batch, read_kinesis, Trigger.AvailableNow) ends: latest (the tip when the read starts), or at_timestamp with endingTimestamp, or per-shard positions (initialPosition's JSON form, or a checkpoint's offset JSON)",
    Source
  )
  val EndingTimestamp = opt(
    "endingTimestamp",
    null,
    "with endingPosition=at_timestamp: ISO-8601 or epoch millis; the read ends before the first record that arrived at or after it (Kinesis' arrival time)",
    Source
  )
  val MaxRecordsPerFetch = opt("maxRecordsPerFetch", "10000", "Limit of one GetRecords call (1..10000)", Source)
  val MaxFetchRate = opt(
    "maxFetchRate",
    "adaptive",
    "MB/s cap per shard; unset = the shard's read quota (2 MiB/s: after a large read the next call waits it out); throttling backs off",
    Source
  )
  val MinFetchPeriod = opt("minFetchPeriod", "200ms", "least time between two GetRecords calls on one shard", Source)
  val MaxIdlePollInterval = opt(
    "maxIdlePollInterval",
    "10s",
    "the longest an idle shard goes unpolled: idle shards are polled once a second while one executor's idle calls stay within 500 a second, evenly further apart beyond (a thousand idle shards: every 2 s), at most this long; by default, past 5,000 idle shards on one executor the budget governs instead (10,000: every 20 s, at most a minute), set it to cap the wait at the cost of more calls",
    Source
  )
  val MaxFetchDuration = opt(
    "maxFetchDuration",
    "10s",
    "the longest a snapshot waits for its shards (their first answer, or data on an idle stream) before a batch is planned",
    Source
  )
  val MaxRecordsPerTrigger = opt(
    "maxRecordsPerTrigger",
    "none",
    "admission control: records per micro-batch across all shards, shared in proportion to what each shard has ready",
    Source
  )
  val MaxRecordsPerShardPerTrigger = opt(
    "maxRecordsPerShardPerTrigger",
    "none",
    "admission control: records per micro-batch from any one shard (the AWS Labs and Qubole connectors' maxFetchRecordsPerShard); with maxRecordsPerTrigger, what this cap leaves of a shard's share goes to the other shards",
    Source
  )
  val MaxBytesPerTrigger = opt(
    "maxBytesPerTrigger",
    "none",
    "admission control: bytes per micro-batch across all shards, shared in proportion to what each shard has ready (Spark 4)",
    Source
  )
  val MinRecordsPerTrigger = opt(
    "minRecordsPerTrigger",
    "none",
    "admission control: the fewest records a micro-batch waits for (Kafka's minOffsetsPerTrigger); fewer run once maxTriggerDelay passed since the last batch; ignored by Trigger.AvailableNow",
    Source
  )
  val MaxTriggerDelay = opt(
    "maxTriggerDelay",
    "15m",
    "with minRecordsPerTrigger: the longest a batch is held back for want of records, counted from the last batch of this run (a restarted query does not wait)",
    Source
  )
  val ShardsPerTask = opt(
    "shardsPerTask",
    "auto",
    "how many shards one Spark task reads; auto = no more tasks than Spark's default parallelism",
    Source)
  val ShardFetchInterval = opt("shardFetchInterval", "1s", "how often shards are listed to discover resharding", Source)
  val FetchBufferSize = opt(
    "fetchBufferSize",
    "auto (1/8 of the executor heap)",
    "bytes of prefetched records one executor holds (all shards, all queries), at most 1/4 of the executor heap; prefetching pauses when full (e.g. 256mb)",
    Source
  )
  val FailOnDataLoss = opt(
    "failOnDataLoss",
    "true",
    "fail when records the query has not read can no longer be read (expired past retention, stream recreated), or warn and go on with what is left",
    Source
  )
  val ConsumerMode = opt(
    "consumerMode",
    "polling",
    "polling (GetRecords, shares each shard's 2 MiB/s with every polling reader) or efo (enhanced fan-out: SubscribeToShard, 2 MiB/s per shard for this query alone; streaming queries only, batch reads poll)",
    Source
  )
  val ConsumerName = opt(
    "consumerName",
    "consumerNamePrefix + the query id",
    "with consumerMode=efo: the consumer registered on each stream read (reused when it exists)",
    Source
  )
  val ConsumerNamePrefix = opt(
    "consumerNamePrefix",
    "spark-kinesis_",
    "with consumerMode=efo and no consumerName: the prefix of the derived consumer name",
    Source)
  val RegisteredConsumerId = opt(
    "registeredConsumerId",
    null,
    "with consumerMode=efo: ARNs of consumers registered beforehand, one per stream (comma-separated); never deregistered by the query",
    Source
  )
  val RequireConsumerDeregistration = opt(
    "requireConsumerDeregistration",
    "false",
    "with consumerMode=efo: deregister the consumer the query registered when it stops",
    Source)
  val RegisterConsumerTimeoutInterval = opt(
    "registerConsumerTimeoutInterval",
    "300s",
    "with consumerMode=efo: the longest a starting query waits for its consumers to be registered and ACTIVE (and for a consumer of its name still being deleted to go); past it the query fails",
    Source
  )
  val DeregisterConsumerTimeoutInterval = opt(
    "deregisterConsumerTimeoutInterval",
    "300s",
    "with requireConsumerDeregistration=true: the longest a stopping query waits for the consumers it deregisters to be gone; past it a WARN, and the query stops anyway",
    Source
  )

  // Sink.
  val MaxRecordsPerRequest = opt("maxRecordsPerRequest", "500", "records per PutRecords request (1..500)", Sink)
  val MaxBytesPerRequest =
    opt("maxBytesPerRequest", "10MiB", "bytes per PutRecords request (the API allowed 5 MiB before 2025)", Sink)
  val MaxInFlightRequests = opt(
    "maxInFlightRequests",
    "4",
    "PutRecords requests one writer task keeps in flight per stream (1..64); all records of one partition key share one",
    Sink)
  val PreserveKeyOrder = opt(
    "preserveKeyOrder",
    "false",
    "never let a resent record land after a later record of its key: at most one record per key per request (slower for hot keys)",
    Sink
  )
  val ClusterByPartitionKey = opt(
    "clusterByPartitionKey",
    "false",
    "shuffle the input so that all records of one partition key are written by one task",
    Sink)
  val FlowControl = opt(
    "flowControl",
    "adaptive",
    "adaptive (each throttling shard paced at its own send rate), ladder (the seed design), aimd, or off",
    Sink)
  val Aggregation = opt(
    "aggregation",
    "none",
    "none, or kpl: pack user records into KPL aggregates per shard (readers must de-aggregate: this connector's source, KCL, aws-kinesis-agg)",
    Sink
  )
  val AggregationMaxBytes = opt(
    "aggregationMaxBytes",
    "50KiB",
    "with aggregation=kpl: largest aggregate, partition key included (1 KiB..maxBytesPerRequest; the stream's maximum record size caps it too)",
    Sink
  )
  val AggregationMaxRecords =
    opt("aggregationMaxRecords", "10000", "with aggregation=kpl: most user records in one aggregate (1..1000000)", Sink)
  val AggregationLingerMs = opt(
    "aggregationLingerMs",
    "100",
    "with aggregation=kpl: the longest, in ms, a user record waits for company in an aggregate before it is sent (1..60000)",
    Sink
  )

  val all: Seq[KinesisOption] = Seq(
    StreamName,
    StreamARN,
    Region,
    Endpoint,
    AwsAccessKey,
    AwsSecretKey,
    AwsSessionToken,
    RoleArn,
    RoleExternalId,
    RoleSessionName,
    StsEndpoint,
    AwsProfile,
    RetryMaxAttempts,
    RetryInitialBackoff,
    RetryMaxBackoff,
    ApiCallTimeout,
    ApiCallAttemptTimeout,
    ConnectTimeout,
    ProxyHost,
    ProxyPort,
    ProxyUsername,
    ProxyPassword,
    NonProxyHosts,
    InitialPosition,
    InitialTimestamp,
    EndingPosition,
    EndingTimestamp,
    MaxRecordsPerFetch,
    MaxFetchRate,
    MinFetchPeriod,
    MaxIdlePollInterval,
    MaxFetchDuration,
    MaxRecordsPerTrigger,
    MaxRecordsPerShardPerTrigger,
    MaxBytesPerTrigger,
    MinRecordsPerTrigger,
    MaxTriggerDelay,
    ShardsPerTask,
    ShardFetchInterval,
    FetchBufferSize,
    FailOnDataLoss,
    ConsumerMode,
    ConsumerName,
    ConsumerNamePrefix,
    RegisteredConsumerId,
    RequireConsumerDeregistration,
    RegisterConsumerTimeoutInterval,
    DeregisterConsumerTimeoutInterval,
    MaxRecordsPerRequest,
    MaxBytesPerRequest,
    MaxInFlightRequests,
    PreserveKeyOrder,
    ClusterByPartitionKey,
    FlowControl,
    Aggregation,
    AggregationMaxBytes,
    AggregationMaxRecords,
    AggregationLingerMs
  )

  private val byLowerKey: Map[String, KinesisOption] = all.map(o => o.lowerKey -> o).toMap
  require(byLowerKey.size == all.size, "two options share a key")

  def find(key: String): Option[KinesisOption] = byLowerKey.get(key.toLowerCase(java.util.Locale.ROOT))

  /** Ours, or a foreign key that holds a secret (`kinesis.awsSecretKey`): masked wherever options are printed. */
  def isSecret(key: String): Boolean = find(key).exists(_.secret) || ForeignOptions.isSecret(key)
}
