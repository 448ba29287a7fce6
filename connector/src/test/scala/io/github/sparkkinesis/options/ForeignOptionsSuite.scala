package io.github.sparkkinesis.options

import io.github.sparkkinesis.sink.SinkConfig
import io.github.sparkkinesis.source.{InitialPosition, SourceConfig}
import java.time.{Duration, Instant}

import io.github.sparkkinesis.client.CredentialsConfig
import org.scalatest.funsuite.AnyFunSuite

/**
 * SPEC §2: every option key of the AWS Labs connector and of Qubole's is honoured, mapped, accepted without effect or
 * refused, never silently ignored; a bad value fails naming the key the job wrote.
 */
class ForeignOptionsSuite extends AnyFunSuite {
  private val Role = "arn:aws:iam::123456789012:role/r"

  /**
   * Each key as the AWS Labs README and options class give it, a value a job would give, one it would not (None:
   * any text goes), and the keys it needs beside it. Kept apart from the table: a key they document that the table
   * forgot fails here.
   */
  private val awsLabsJob: Seq[(String, String, Option[String], Seq[(String, String)])] = Seq(
    ("kinesis.streamName", "s", Some("bad name!"), Nil),
    ("kinesis.endpointUrl", "https://kinesis.us-east-2.amazonaws.com", Some("not a url"), Nil),
    ("kinesis.region", "us-east-2", Some("Ohio"), Nil),
    ("kinesis.kinesisRegion", "us-east-2", Some("Ohio"), Nil),
    ("kinesis.consumerType", "SubscribeToShard", Some("EFO"), Nil),
    ("kinesis.consumerName", "app", None, Seq("kinesis.consumerType" -> "SubscribeToShard")),
    ("kinesis.failOnDataLoss", "false", Some("no"), Nil),
    ("kinesis.maxFetchRecordsPerShard", "100000", Some("0"), Nil),
    ("kinesis.maxFetchTimePerShardSec", "10", Some("9"), Nil),
    ("kinesis.startingPosition", "TRIM_HORIZON", Some("OLDEST"), Nil),
    ("kinesis.describeShardInterval", "1s", Some("often"), Nil),
    ("kinesis.minBatchesToRetain", "100", Some("0"), Nil),
    ("kinesis.checkNewRecordThreads", "8", Some("0"), Nil),
    ("kinesis.metadataCommitterType", "DYNAMODB", Some("S3"), Nil),
    ("kinesis.metadataPath", "s3://bucket/meta", None, Nil),
    ("kinesis.metadataNumRetries", "5", Some("-1"), Nil),
    ("kinesis.metadataRetryIntervalsMs", "1000", Some("1s"), Nil),
    ("kinesis.metadataMaxRetryIntervalMs", "10000", Some("-5"), Nil),
    ("kinesis.dynamodb.tableName", "kinesisTestMetadata", None, Nil),
    ("kinesis.clientNumRetries", "5", Some("-1"), Nil),
    ("kinesis.clientRetryIntervalsMs", "1000", Some("1s"), Nil),
    ("kinesis.clientMaxRetryIntervalMs", "10000", Some("x"), Nil),
    ("kinesis.internal.dataQueueCapacity", "1000", Some("-1"), Nil),
    ("kinesis.internal.maxDataQueueEmptyCount", "2", Some("x"), Nil),
    ("kinesis.internal.dataQueueWaitTimeoutSec", "5", Some("x"), Nil),
    ("kinesis.internal.maintenanceTaskIntervalSec", "100", Some("0"), Nil),
    ("kinesis.internal.avoidEmptyBatches", "true", Some("yes"), Nil),
    ("kinesis.stsRoleArn", Role, Some("my-role"), Seq("kinesis.stsSessionName" -> "s")),
    ("kinesis.stsSessionName", "session", None, Seq("kinesis.stsRoleArn" -> Role)),
    ("kinesis.stsEndpointUrl", "https://sts.us-east-2.amazonaws.com", Some("sts"), Seq("kinesis.stsRoleArn" -> Role)),
    ("kinesis.awsAccessKeyId", "AKIAEXAMPLE", None, Seq("kinesis.awsSecretKey" -> "secret")),
    ("kinesis.awsSecretKey", "secret", None, Seq("kinesis.awsAccessKeyId" -> "AKIAEXAMPLE")),
    (
      "kinesis.sessionToken",
      "token",
      None,
      Seq("kinesis.awsAccessKeyId" -> "AKIAEXAMPLE", "kinesis.awsSecretKey" -> "secret")),
    ("kinesis.credentialProviderClass", "com.example.Provider", None, Nil),
    ("kinesis.credentialProviderParam", "p4r4m", None, Nil),
    ("kinesis.subscribeToShard.timeoutSec", "60", Some("-1"), Nil),
    ("kinesis.subscribeToShard.maxRetries", "10", Some("x"), Nil),
    ("kinesis.getRecords.numberOfRecordsPerFetch", "10000", Some("10001"), Nil),
    ("kinesis.getRecords.fetchIntervalMs", "200", Some("100"), Nil),
    ("kinesis.sink.flushWaitTimeMs", "100", Some("x"), Nil),
    ("kinesis.sink.recordMaxBufferedTimeMs", "1000", Some("0"), Nil),
    ("kinesis.sink.maxConnections", "1", Some("0"), Nil),
    ("kinesis.sink.aggregationEnabled", "true", Some("yes"), Nil),
    ("kinesis.sink.recordTtl", "30000", Some("x"), Nil),
    ("proxyAddress", "proxy.example.com", Some("http://proxy.example.com"), Nil),
    ("proxyPort", "3128", Some("0"), Seq("proxyAddress" -> "proxy.example.com")),
    ("proxyUsername", "u", None, Seq("proxyAddress" -> "proxy.example.com", "proxyPassword" -> "pw")),
    ("proxyPassword", "pr0xy-pw", None, Seq("proxyAddress" -> "proxy.example.com", "proxyUsername" -> "u"))
  )

  /** The same for Qubole's README tables and the keys its code reads. */
  private val quboleJob: Seq[(String, String, Option[String], Seq[(String, String)])] = Seq(
    ("streamName", "s", Some("bad name!"), Nil),
    ("endpointUrl", "https://kinesis.us-east-1.amazonaws.com", Some("kinesis"), Nil),
    ("regionName", "us-east-1", Some("Virginia"), Nil),
    ("awsAccessKeyId", "AKIAEXAMPLE", None, Seq("awsSecretKey" -> "secret")),
    ("awsSecretKey", "secret", None, Seq("awsAccessKeyId" -> "AKIAEXAMPLE")),
    ("sessionToken", "token", None, Seq("awsAccessKeyId" -> "AKIAEXAMPLE", "awsSecretKey" -> "secret")),
    ("awsSTSRoleARN", Role, Some("role"), Nil),
    ("awsSTSSessionName", "session", None, Seq("awsSTSRoleARN" -> Role)),
    ("awsUseInstanceProfile", "true", Some("yes"), Nil),
    ("startingPosition", "trim_horizon", Some("oldest"), Nil),
    ("failOnDataLoss", "true", Some("no"), Nil),
    ("kinesis.executor.maxFetchTimeInMs", "1000", Some("x"), Nil),
    ("kinesis.executor.maxFetchRecordsPerShard", "100000", Some("0"), Nil),
    ("kinesis.executor.maxRecordPerRead", "10000", Some("0"), Nil),
    ("kinesis.executor.addIdleTimeBetweenReads", "false", Some("no"), Nil),
    (
      "kinesis.executor.idleTimeBetweenReadsInMs",
      "1000",
      Some("100"),
      Seq("kinesis.executor.addIdleTimeBetweenReads" -> "true")),
    ("kinesis.client.describeShardInterval", "1s", Some("x"), Nil),
    ("kinesis.client.numRetries", "3", Some("-1"), Nil),
    ("kinesis.client.retryIntervalMs", "1000", Some("x"), Nil),
    ("kinesis.client.maxRetryIntervalMs", "10000", Some("x"), Nil),
    ("kinesis.client.avoidEmptyBatches", "false", Some("x"), Nil),
    ("kinesis.client.maxParallelThreads", "8", Some("0"), Nil),
    ("kinesis.executor.metadata.committer", "hdfs", None, Nil),
    ("kinesis.executor.metadata.path", "/tmp/meta", None, Nil),
    ("kinesis.executor.metadata.hdfs.numRetries", "3", Some("x"), Nil),
    ("kinesis.executor.metadata.hdfs.retryIntervalMs", "1000", Some("x"), Nil),
    ("kinesis.executor.metadata.hdfs.maxRetryIntervalMs", "10000", Some("x"), Nil),
    ("kinesis.executor.recordMaxBufferedTime", "1000", Some("0"), Seq("kinesis.executor.aggregationEnabled" -> "true")),
    ("kinesis.executor.maxConnections", "1", Some("65"), Nil),
    ("kinesis.executor.aggregationEnabled", "true", Some("1"), Nil),
    ("kinesis.executor.flushWaitTimeMillis", "100", Some("x"), Nil),
    ("kniesis.executor.flushWaitTimeMillis", "100", Some("x"), Nil)
  )

  private def source(kv: (String, String)*): SourceConfig = SourceConfig(OptionReader(kv.toMap))
  private def sink(kv: (String, String)*): SinkConfig = SinkConfig(OptionReader.forSink(kv.toMap))
  /** Both sides read every key: a job may give the source's keys to the sink and the other way round. */
  private def both(kv: (String, String)*): Unit = { source(kv: _*); sink(kv: _*) }
  private def error(kv: (String, String)*): String =
    intercept[KinesisOptionException] { both(kv: _*) }.getMessage

  private def checkJob(
      table: ForeignTable,
      job: Seq[(String, String, Option[String], Seq[(String, String)])],
      stream: String): Unit = {
    assert(table.all.map(_.key.toLowerCase) == job.map(_._1.toLowerCase), s"${table.name}'s table and its keys differ")
    for ((key, good, bad, beside) <- job) {
      val row = table.all.find(_.key == key).get
      val base = (if (key.equalsIgnoreCase(stream)) Nil else Seq(stream -> "s")) ++ beside
      if (row.handling == Handling.Refused) {
        val msg = error((base :+ (key -> good)): _*)
        assert(msg.startsWith(s"Option '$key' is ${table.name}'s and not supported here: ${row.here}"), msg)
        assert(!msg.contains(good) || !row.secret, msg)
      } else {
        both((base :+ (key -> good)): _*)
        bad.foreach { b =>
          val msg = error((base :+ (key -> b)): _*)
          assert(msg.contains(s"'$key'"), s"$key=$b: $msg")
          assert(msg.contains(s"'$b'") || KinesisOptions.isSecret(key), s"$key=$b: $msg")
        }
      }
    }
  }

  test("every AWS Labs key works with its documented values and fails with others, naming the key") {
    checkJob(AwsLabsOptions, awsLabsJob, "kinesis.streamName")
  }

  test("every Qubole key works with its documented values and fails with others, naming the key") {
    checkJob(QuboleOptions, quboleJob, "streamName")
  }

  test("a job written for the AWS Labs connector reads with the meaning it had there") {
    val c = source(
      "kinesis.streamName" -> "teststream",
      "kinesis.region" -> "us-east-2",
      "kinesis.consumerType" -> "SubscribeToShard",
      "kinesis.consumerName" -> "TestConsumer",
      "kinesis.endpointUrl" -> "https://kinesis.us-east-2.amazonaws.com",
      "kinesis.startingposition" -> "TRIM_HORIZON",
      "kinesis.getRecords.numberOfRecordsPerFetch" -> "5000",
      "kinesis.getRecords.fetchIntervalMs" -> "400",
      "kinesis.describeShardInterval" -> "2s",
      "kinesis.maxFetchRecordsPerShard" -> "1000",
      "kinesis.clientNumRetries" -> "5",
      "kinesis.clientRetryIntervalsMs" -> "0",
      "kinesis.clientMaxRetryIntervalMs" -> "10000",
      "kinesis.failOnDataLoss" -> "false",
      "kinesis.stsRoleArn" -> Role,
      "kinesis.stsSessionName" -> "job"
    )
    assert(c.streams == Seq("teststream") && c.connection.region.contains("us-east-2"))
    assert(c.connection.endpoint.map(_.toString).contains("https://kinesis.us-east-2.amazonaws.com"))
    assert(c.fanOut.flatMap(_.consumerName).contains("TestConsumer"))
    assert(c.initialPosition == InitialPosition.TrimHorizon)
    assert(c.maxRecordsPerFetch == 5000 && c.minFetchPeriod == Duration.ofMillis(400))
    assert(c.shardFetchInterval == Duration.ofSeconds(2) && c.maxRecordsPerShardPerTrigger.contains(1000L))
    // Their clientNumRetries counts attempts, the first one included, as retryMaxAttempts does.
    assert(c.connection.retry.maxAttempts.contains(5) && c.connection.retry.initialBackoff == Duration.ofMillis(1) &&
      c.connection.retry.maxBackoff == Duration.ofSeconds(10))
    assert(!c.failOnDataLoss)
    assert(c.connection.credentials.isInstanceOf[CredentialsConfig.AssumeRole])
    assert(c.connection.credentials.asInstanceOf[CredentialsConfig.AssumeRole].sessionName == "job")
  }

  test("kinesis.startingPosition: words, AT_TIMESTAMP with an ISO-8601 time, and its JSON of shard positions") {
    def at(v: String) = source("kinesis.streamName" -> "s", "kinesis.startingPosition" -> v).initialPosition
    assert(at("latest") == InitialPosition.Latest && at("EARLIEST") == InitialPosition.TrimHorizon)
    assert(at("AT_TIMESTAMP 2023-08-30T19:00:05Z") == InitialPosition.AtTimestamp(
      Instant.parse("2023-08-30T19:00:05Z").toEpochMilli))
    assert(at("at_timestamp 2023-08-30T19:00:05-08:00") == InitialPosition.AtTimestamp(
      Instant.parse("2023-08-31T03:00:05Z").toEpochMilli))
    val msg = error("kinesis.streamName" -> "s", "kinesis.startingPosition" -> "AT_TIMESTAMP yesterday")
    assert(
      msg == "Invalid value 'AT_TIMESTAMP yesterday' for option 'kinesis.startingPosition': expected " +
        "AT_TIMESTAMP followed by an ISO-8601 time such as 2023-08-30T19:00:05Z or 2023-08-30T19:00:05-08:00 (it " +
        "stands for initialPosition here).",
      msg
    )
    val json =
      """{"shardId-000000000001": {"iteratorType": "AFTER_SEQUENCE_NUMBER", "iteratorPosition": "4960", "subSequenceNumber": "2", "isLast": false},
                 | "metadata": {"streamName": "s", "batchId": "7"},
                 | "shardId-000000000000": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "4961", "subSequenceNumber": "-1"},
                 | "shardId-000000000002": {"iteratorType": "TRIM_HORIZON", "iteratorPosition": ""}}""".stripMargin
    assert(at(json) == source(
      "streamName" -> "s",
      "initialPosition" ->
        """{"shardId-000000000001": {"after_sequence_number": "4960", "sub": 2},
        | "shardId-000000000000": {"at_sequence_number": "4961"}, "shardId-000000000002": "trim_horizon"}""".stripMargin
    ).initialPosition)
    val latest = """{"shardId-000000000000": {"iteratorType": "LATEST", "iteratorPosition": ""}}"""
    assert(error("kinesis.streamName" -> "s", "kinesis.startingPosition" -> latest).contains(
      "shard shardId-000000000000 has LATEST"))
    // Qubole's takes no AT_TIMESTAMP form.
    assert(error("streamName" -> "s", "startingPosition" -> "AT_TIMESTAMP 2023-08-30T19:00:05Z")
      .startsWith("Invalid value 'AT_TIMESTAMP 2023-08-30T19:00:05Z' for option 'startingPosition': expected LATEST, TRIM_HORIZON, EARLIEST or a JSON map"))
  }

  test("a key and the option of ours it stands for must agree; two keys for one option too") {
    assert(error("streamName" -> "s", "initialPosition" -> "latest", "kinesis.startingPosition" -> "TRIM_HORIZON") ==
      "Options 'initialPosition' ('latest') and 'kinesis.startingPosition' ('TRIM_HORIZON') say different things: keep one.")
    assert(source("streamName" -> "s", "initialPosition" -> "trim_horizon", "kinesis.startingPosition" -> "TRIM_HORIZON")
      .initialPosition == InitialPosition.TrimHorizon)
    assert(error("kinesis.streamName" -> "s", "kinesis.region" -> "us-east-1", "regionName" -> "eu-west-1")
      .startsWith("Options 'kinesis.region' ('us-east-1') and 'regionName' ('eu-west-1') say different things"))
    // Secrets are never shown, even when they disagree.
    val msg =
      error("streamName" -> "s", "awsAccessKey" -> "AKIA1", "awsSecretKey" -> "mine", "kinesis.awsSecretKey" -> "theirs")
    assert(
      msg == "Options 'awsSecretKey' ('***') and 'kinesis.awsSecretKey' ('***') say different things: keep one.",
      msg)
  }

  test("a source reads in kinesis.kinesisRegion (STS too) and a sink writes in kinesis.region, as there") {
    assert(source("kinesis.streamName" -> "s", "kinesis.region" -> "eu-west-1").connection.region.contains("eu-west-1"))
    assert(sink("kinesis.streamName" -> "s", "kinesis.region" -> "eu-west-1").connection.region.contains("eu-west-1"))
    val split = Seq(
      "kinesis.streamName" -> "s",
      "kinesis.region" -> "eu-west-1",
      "kinesis.kinesisRegion" -> "us-east-2",
      "kinesis.stsRoleArn" -> Role,
      "kinesis.stsSessionName" -> "j")
    val read = source(split: _*).connection
    assert(read.region.contains("us-east-2"))
    // STS in the source's region, as there: no endpoint of another region's.
    assert(read.credentials.asInstanceOf[CredentialsConfig.AssumeRole].stsEndpoint.isEmpty)
    val write = sink(split: _*).connection
    assert(write.region.contains("eu-west-1"))
    assert(write.credentials.asInstanceOf[CredentialsConfig.AssumeRole].stsEndpoint.isEmpty)
    // A source's kinesis.region places only its DynamoDB table there: the stream's region is the endpoint's.
    assert(source(
      "kinesis.streamName" -> "s",
      "kinesis.region" -> "eu-west-1",
      "kinesis.endpointUrl" -> "https://kinesis.us-east-2.amazonaws.com").connection.region.contains("us-east-2"))
    assert(sink("kinesis.streamName" -> "s", "kinesis.kinesisRegion" -> "us-east-2").connection.region.isEmpty)
    assert(error("kinesis.streamName" -> "s", "kinesis.kinesisRegion" -> "Ohio").contains("'kinesis.kinesisRegion'"))
  }

  test("an AWS endpoint names the region when no region is given") {
    def region(endpoint: String, more: (String, String)*) =
      source((Seq("streamName" -> "s", "endpoint" -> endpoint) ++ more): _*).connection.region
    assert(region("https://kinesis.us-east-2.amazonaws.com").contains("us-east-2"))
    assert(region("https://kinesis-fips.us-gov-west-1.amazonaws.com").contains("us-gov-west-1"))
    assert(region("https://vpce-0123-abcd.kinesis.eu-central-1.vpce.amazonaws.com").contains("eu-central-1"))
    assert(region("https://kinesis.cn-north-1.amazonaws.com.cn").contains("cn-north-1"))
    assert(region("http://127.0.0.1:4566").isEmpty)
    assert(region("https://kinesis.us-east-2.amazonaws.com", "region" -> "eu-west-1").contains("eu-west-1"))
  }

  test("the sink's keys: aggregation, its linger only when aggregating, connections as requests in flight") {
    val on = sink(
      "kinesis.streamName" -> "s",
      "kinesis.sink.aggregationEnabled" -> "true",
      "kinesis.sink.recordMaxBufferedTimeMs" -> "250",
      "kinesis.sink.maxConnections" -> "8")
    assert(on.aggregation.map(_.lingerMs).contains(250) && on.maxInFlightRequests == 8)
    val off = sink("kinesis.streamName" -> "s", "kinesis.sink.recordMaxBufferedTimeMs" -> "250")
    assert(off.aggregation.isEmpty)
    assert(sink("streamName" -> "s", "kinesis.executor.aggregationEnabled" -> "false").aggregation.isEmpty)
    assert(sink("streamName" -> "s", "kinesis.executor.aggregationEnabled" -> "TRUE").aggregation.isDefined)
    assert(error("kinesis.streamName" -> "s", "kinesis.sink.maxConnections" -> "100") == "Invalid value '100' for " +
      "option 'kinesis.sink.maxConnections': expected an integer in 1..64 (it stands for maxInFlightRequests here).")
  }

  test("Qubole's idle time between reads applies only when it is switched on") {
    assert(source("streamName" -> "s", "kinesis.executor.idleTimeBetweenReadsInMs" -> "1000").minFetchPeriod ==
      SourceConfig.KinesisMinFetchPeriod)
    assert(source(
      "streamName" -> "s",
      "kinesis.executor.addIdleTimeBetweenReads" -> "true",
      "kinesis.executor.idleTimeBetweenReadsInMs" -> "1000").minFetchPeriod == Duration.ofSeconds(1))
  }

  test("an unknown kinesis.* key fails; a typo of another connector's key is named") {
    assert(error("streamName" -> "s", "kinesis.executor.somethingNew" -> "1").startsWith("Unknown option " +
      "'kinesis.executor.somethingNew': keys prefixed 'kinesis.' are the AWS Labs and Qubole connectors'"))
    assert(error("streamName" -> "s", "kinesis.startingPositon" -> "LATEST") == "Unknown option " +
      "'kinesis.startingPositon': did you mean 'kinesis.startingPosition'? Options are matched case-insensitively.")
    // Spark's own options pass through the sink's option map: other keys are left alone.
    both("streamName" -> "s", "checkpointLocation" -> "/tmp/c", "path" -> "x")
  }

  test("values read through another connector's key are named by that key") {
    assert(error("kinesis.streamName" -> "s", "kinesis.getRecords.numberOfRecordsPerFetch" -> "20000") == "Invalid " +
      "value '20000' for option 'kinesis.getRecords.numberOfRecordsPerFetch': expected an integer in 1..10000 (it " +
      "stands for maxRecordsPerFetch here).")
    assert(error("kinesis.streamName" -> "bad name!").startsWith("Invalid value 'bad name!' for option " +
      "'kinesis.streamName': expected stream names"))
  }

  test("secrets of other connectors are masked wherever options are printed") {
    val printed = OptionReader.redact(Map(
      "kinesis.awsSecretKey" -> "s3cr3t",
      "sessionToken" -> "t0k3n",
      "kinesis.credentialProviderParam" -> "p4r4m",
      "proxyPassword" -> "pw",
      "kinesis.streamName" -> "s"))
    assert(printed.values.toSet == Set("***", "s"))
    assert(!error("proxyPassword" -> "pw", "streamName" -> "s").contains("pw'"))
    assert(!error("proxyAddress" -> "p", "proxyPassword" -> "pw", "streamName" -> "s").contains("pw"))
  }

  test("the tables never claim a key of ours or of Databricks' as theirs, nor one key twice") {
    val foreign = AwsLabsOptions.all ++ QuboleOptions.all
    for (k <- foreign) {
      val ours = KinesisOptions.find(k.key).isDefined || DatabricksOptions.findForeign(k.key).isDefined
      assert(ours == (k.handling == Handling.Honoured), k.key)
    }
    assert(foreign.map(_.lowerKey).distinct.size == foreign.size)
  }
}
