package io.github.sparkkinesis.options

import io.github.sparkkinesis.options.KinesisOptions._

/**
 * Every option key of Qubole's `kinesis-sql` connector (format `kinesis`, like ours), as its README's source and sink
 * tables and its code list them (checked 2026-11-27), and what each does here. Its keys match case-insensitively
 * there too. docs/migrating.md's Qubole table is generated from [[all]] (`KinesisOptionsDocSuite` checks it).
 */
object QuboleOptions extends ForeignTable("Qubole's connector", "Qubole") {
  /** Only with `addIdleTimeBetweenReads=true` does the idle time apply there. */
  private val idleTime = mapped(
    "kinesis.executor.idleTimeBetweenReadsInMs",
    MinFetchPeriod,
    "with " +
      "kinesis.executor.addIdleTimeBetweenReads=true: `minFetchPeriod` (milliseconds, at least 200: Kinesis allows 5 " +
      "GetRecords calls a second per shard); without it, no effect, as there"
  ) { v =>
    val ms = v.long(0)
    if (v.other("kinesis.executor.addIdleTimeBetweenReads").exists(_.equalsIgnoreCase("true"))) {
      if (ms < 200) v.fail("at least 200 (ms): Kinesis allows 5 GetRecords calls a second per shard")
      Seq(MinFetchPeriod -> s"${ms}ms")
    } else Nil
  }

  val all: Seq[ForeignKey] = Seq(
    honoured("streamName"),
    renamed(
      "endpointUrl",
      Endpoint,
      "`endpoint`; without a region, the region is read from a " +
        "kinesis.<region>.amazonaws.com endpoint"),
    renamed("regionName", Region),
    renamed("awsAccessKeyId", AwsAccessKey, secret = true),
    honoured("awsSecretKey"),
    renamed("sessionToken", AwsSessionToken, secret = true),
    renamed("awsSTSRoleARN", RoleArn),
    renamed("awsSTSSessionName", RoleSessionName),
    honoured("awsUseInstanceProfile", "as in the Databricks table above"),
    mapped(
      "startingPosition",
      InitialPosition,
      "`initialPosition`: latest, trim_horizon, earliest, and its JSON map " +
        "of shard positions (iteratorType AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER or TRIM_HORIZON; shards not in the " +
        "map start at their oldest record here, at the start time there)"
    )(ForeignPositions.read(_, withTimestamp = false)),
    honoured("failOnDataLoss", "the same key, same default (true)"),
    noEffect(
      "kinesis.executor.maxFetchTimeInMs",
      "an integer >= 0; a task here reads the range the driver planned " +
        "from records executors already prefetched, so it has no fetch time to bound"
    )(_.long(0)),
    perShardRecords("kinesis.executor.maxFetchRecordsPerShard"),
    renamed("kinesis.executor.maxRecordPerRead", MaxRecordsPerFetch, "`maxRecordsPerFetch` (1..10000)"),
    noEffect(
      "kinesis.executor.addIdleTimeBetweenReads",
      "true or false; says whether " +
        "kinesis.executor.idleTimeBetweenReadsInMs applies")(_.boolean),
    idleTime,
    mapped("kinesis.client.describeShardInterval", ShardFetchInterval, "`shardFetchInterval` (at least 100ms here)")(
      v =>
        Seq(ShardFetchInterval -> s"${v.millis(100)}ms")),
    retries("kinesis.client.numRetries", 3),
    backoffMs("kinesis.client.retryIntervalMs", RetryInitialBackoff),
    backoffMs("kinesis.client.maxRetryIntervalMs", RetryMaxBackoff),
    noEffect(
      "kinesis.client.avoidEmptyBatches",
      "true or false; this source never plans a micro-batch without " +
        "records")(_.boolean),
    noEffect(
      "kinesis.client.maxParallelThreads",
      "a positive integer; the driver does not look for new records " +
        "here: executors read ahead and tell it")(_.long(1, Int.MaxValue)),
    noEffect("kinesis.executor.metadata.committer", s"hdfs; $Offsets")(_ => ()),
    noEffect("kinesis.executor.metadata.path", s"a path; $Offsets")(_ => ()),
    noEffect("kinesis.executor.metadata.hdfs.numRetries", s"an integer >= 0; $Offsets")(_.long(0, Int.MaxValue)),
    noEffect("kinesis.executor.metadata.hdfs.retryIntervalMs", s"an integer >= 0; $Offsets")(_.long(0)),
    noEffect("kinesis.executor.metadata.hdfs.maxRetryIntervalMs", s"an integer >= 0; $Offsets")(_.long(0)),
    linger("kinesis.executor.recordMaxBufferedTime", "kinesis.executor.aggregationEnabled"),
    maxConnections("kinesis.executor.maxConnections"),
    aggregation("kinesis.executor.aggregationEnabled"),
    flushWait("kinesis.executor.flushWaitTimeMillis"),
    // Its code reads the sink's flush wait under this misspelt key (its README spells it so too).
    flushWait("kniesis.executor.flushWaitTimeMillis")
  )
}
