package io.github.sparkkinesis.options

import io.github.sparkkinesis.options.KinesisOptions._

/**
 * Every option key of the AWS Labs `spark-sql-kinesis-connector` (format `aws-kinesis`, bundled with EMR), as its
 * README's source and sink tables and its options class list them (checked 2026-11-27), and what each does here.
 * docs/migrating.md's AWS Labs table is generated from [[all]] (`KinesisOptionsDocSuite` checks it).
 */
object AwsLabsOptions extends ForeignTable("the AWS Labs connector", "AWS Labs") {
  /**
   * Its source calls Kinesis and STS in `kinesis.kinesisRegion` (by default the region kinesis.endpointUrl names) and
   * keeps only its DynamoDB metadata table in `kinesis.region`; its sink (the KPL) does everything in
   * `kinesis.region` and never reads `kinesis.kinesisRegion`.
   */
  private val region = mapped(
    "kinesis.region",
    Region,
    "`region` for a sink; for a source only when neither kinesis.kinesisRegion nor a " +
      "kinesis.<region>.amazonaws.com kinesis.endpointUrl names the stream's region, as there (its source keeps only " +
      "its DynamoDB metadata table, which has no counterpart here, in this region)"
  ) { v =>
    checkRegion(v)
    val endpointRegion = v.other("kinesis.endpointUrl")
      .flatMap(url => scala.util.Try(java.net.URI.create(url).getHost).toOption.flatMap(host => Option(host)))
      .flatMap(host => OptionReader.regionOfEndpoint(host))
    val streamRegionGiven = v.other("kinesis.kinesisRegion").isDefined || endpointRegion.isDefined
    if (v.sink || !streamRegionGiven) Seq(Region -> v.value) else Nil
  }

  private val kinesisRegion = mapped(
    "kinesis.kinesisRegion",
    Region,
    "`region` for a source (STS included); no effect on a sink: its sink writes in kinesis.region there"
  ) { v =>
    checkRegion(v)
    if (v.sink) Nil else Seq(Region -> v.value)
  }

  private def checkRegion(v: ForeignValue): Unit =
    if (!v.value.matches("[a-z]{2}(-[a-z]+)+-\\d+")) v.fail("an AWS region name such as us-east-1")

  val all: Seq[ForeignKey] = Seq(
    renamed("kinesis.streamName", StreamName),
    renamed(
      "kinesis.endpointUrl",
      Endpoint,
      "`endpoint` (not required here); without a region, the region is read " +
        "from a kinesis.<region>.amazonaws.com endpoint, as there"
    ),
    region,
    kinesisRegion,
    mapped("kinesis.consumerType", ConsumerMode, "`consumerMode`: GetRecords = polling, SubscribeToShard = efo")(v =>
      Seq(ConsumerMode -> (if (v.oneOf("GetRecords", "SubscribeToShard") == "GetRecords") "polling" else "efo"))),
    renamed(
      "kinesis.consumerName",
      ConsumerName,
      "`consumerName` (not required for efo here: the default is " +
        "derived from the query id)"),
    renamed(
      "kinesis.failOnDataLoss",
      FailOnDataLoss,
      "`failOnDataLoss` (default true here, false there: without " +
        "the key, a query here fails when records it has not read are gone)"
    ),
    perShardRecords("kinesis.maxFetchRecordsPerShard"),
    noEffect(
      "kinesis.maxFetchTimePerShardSec",
      "an integer of seconds, at least 10; a task here reads the range the " +
        "driver planned from records executors already prefetched, so it has no fetch time to bound: bound a batch with " +
        "maxRecordsPerTrigger, maxRecordsPerShardPerTrigger or maxBytesPerTrigger"
    )(_.long(10, Int.MaxValue)),
    mapped(
      "kinesis.startingPosition",
      InitialPosition,
      "`initialPosition` (+ `initialTimestamp`): LATEST, " +
        "TRIM_HORIZON, EARLIEST, AT_TIMESTAMP <time>, and its JSON map of shard positions (iteratorType " +
        "AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER or TRIM_HORIZON; shards not in the map start at their oldest " +
        "record here, at the start time there)"
    )(ForeignPositions.read(_, withTimestamp = true)),
    mapped("kinesis.describeShardInterval", ShardFetchInterval, "`shardFetchInterval` (at least 100ms here)")(v =>
      Seq(ShardFetchInterval -> s"${v.millis(100)}ms")),
    noEffect(
      "kinesis.minBatchesToRetain",
      s"a positive integer; $Offsets (Spark's " +
        "spark.sql.streaming.minBatchesToRetain keeps the checkpoint's batches)")(_.long(1, Int.MaxValue)),
    noEffect(
      "kinesis.checkNewRecordThreads",
      "a positive integer; the driver does not look for new records here: " +
        "executors read ahead and tell it")(_.long(1, Int.MaxValue)),
    noEffect("kinesis.metadataCommitterType", s"HDFS or DYNAMODB; $Offsets")(_.oneOf("HDFS", "DYNAMODB")),
    noEffect("kinesis.metadataPath", s"a path; $Offsets")(_ => ()),
    noEffect("kinesis.metadataNumRetries", s"an integer >= 0; $Offsets")(_.long(0, Int.MaxValue)),
    noEffect("kinesis.metadataRetryIntervalsMs", s"an integer >= 0; $Offsets")(_.long(0)),
    noEffect("kinesis.metadataMaxRetryIntervalMs", s"an integer >= 0; $Offsets")(_.long(0)),
    noEffect("kinesis.dynamodb.tableName", s"a table name; $Offsets")(_ => ()),
    retries("kinesis.clientNumRetries", 5),
    backoffMs("kinesis.clientRetryIntervalsMs", RetryInitialBackoff),
    backoffMs("kinesis.clientMaxRetryIntervalMs", RetryMaxBackoff),
    noEffect(
      "kinesis.internal.dataQueueCapacity",
      "an integer >= 0; prefetched records are bounded by " +
        "fetchBufferSize here")(_.long(0, Int.MaxValue)),
    noEffect("kinesis.internal.maxDataQueueEmptyCount", "an integer >= 0; an idle shard never holds a task here")(_.long(
      0,
      Int.MaxValue)),
    noEffect("kinesis.internal.dataQueueWaitTimeoutSec", "an integer >= 0; an idle shard never holds a task here")(
      _.long(0, Int.MaxValue)),
    noEffect(
      "kinesis.internal.maintenanceTaskIntervalSec",
      "a positive integer; nothing here needs periodic " +
        "maintenance")(_.long(1, Int.MaxValue)),
    noEffect(
      "kinesis.internal.avoidEmptyBatches",
      "true or false; this source never plans a micro-batch without " +
        "records")(_.boolean),
    renamed("kinesis.stsRoleArn", RoleArn),
    renamed("kinesis.stsSessionName", RoleSessionName),
    renamed("kinesis.stsEndpointUrl", StsEndpoint),
    renamed("kinesis.awsAccessKeyId", AwsAccessKey, secret = true),
    renamed("kinesis.awsSecretKey", AwsSecretKey, secret = true),
    renamed("kinesis.sessionToken", AwsSessionToken, secret = true),
    refused(
      "kinesis.credentialProviderClass",
      "a class implementing the AWS Labs connector's own credentials " +
        "interface cannot be loaded here: give roleArn (with roleExternalId), awsProfile, or awsAccessKey/awsSecretKey, " +
        "or leave credentials to the AWS default chain (environment, profile, web identity, instance profile)"
    ),
    refused(
      "kinesis.credentialProviderParam",
      "it is the parameter of kinesis.credentialProviderClass, which is " +
        "refused: give roleArn, awsProfile or awsAccessKey/awsSecretKey instead",
      secret = true
    ),
    noEffect(
      "kinesis.subscribeToShard.timeoutSec",
      "an integer >= 0; a subscription here waits at most " +
        "apiCallAttemptTimeout for each answer and is renewed as Kinesis ends it"
    )(_.long(0, Int.MaxValue)),
    noEffect(
      "kinesis.subscribeToShard.maxRetries",
      "an integer >= 0; failed subscriptions are retried by the retry " +
        "policy (retryMaxAttempts, retryInitialBackoff, retryMaxBackoff)"
    )(_.long(0, Int.MaxValue)),
    renamed("kinesis.getRecords.numberOfRecordsPerFetch", MaxRecordsPerFetch, "`maxRecordsPerFetch` (1..10000)"),
    mapped(
      "kinesis.getRecords.fetchIntervalMs",
      MinFetchPeriod,
      "`minFetchPeriod` (milliseconds, at least 200: " +
        "Kinesis allows 5 GetRecords calls a second per shard)"
    )(v => Seq(MinFetchPeriod -> s"${v.long(200)}ms")),
    flushWait("kinesis.sink.flushWaitTimeMs"),
    linger("kinesis.sink.recordMaxBufferedTimeMs", "kinesis.sink.aggregationEnabled"),
    maxConnections("kinesis.sink.maxConnections"),
    aggregation("kinesis.sink.aggregationEnabled"),
    noEffect(
      "kinesis.sink.recordTtl",
      "an integer >= 0 (ms); records are never dropped here: one Kinesis keeps " +
        "refusing past the retry policy fails the task, naming the stream and the error"
    )(_.long(0)),
    mapped(
      "proxyAddress",
      ProxyHost,
      "`proxyHost`, with `proxyPort` 443 when not given (the KPL's default there); there only the sink (its KPL) " +
        "went through the proxy, here every client does: source, sink and STS"
    ) { v =>
      Seq(ProxyHost -> v.value) ++ (if (v.other(ProxyPort.key).isEmpty) Seq(ProxyPort -> "443") else Nil)
    },
    honoured("proxyPort", ViaProxy),
    honoured("proxyUsername", ViaProxy),
    honoured("proxyPassword", ViaProxy)
  )

  private def ViaProxy = "the same key here, for every client (there only the sink's KPL went through the proxy)"
}
