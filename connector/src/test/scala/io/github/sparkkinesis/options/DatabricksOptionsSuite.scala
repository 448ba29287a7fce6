package io.github.sparkkinesis.options

import io.github.sparkkinesis.source.{EndPosition, InitialPosition, ShardPosition, SourceConfig}
import java.time.Instant

import io.github.sparkkinesis.client.CredentialsConfig
import org.scalatest.funsuite.AnyFunSuite

/** SPEC §2: every option of Databricks' Kinesis connector is honoured or refused, none silently ignored. */
class DatabricksOptionsSuite extends AnyFunSuite {
  import DatabricksOptions._
  import Handling._

  private val ConsumerArn = "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/app:1700000000"
  private val Keys = Seq("awsAccessKey" -> "AKIAEXAMPLE", "awsSecretKey" -> "secret")
  private val Role = Seq("roleArn" -> "arn:aws:iam::123456789012:role/r")
  private val Efo = Seq("consumerMode" -> "efo")

  /**
   * Databricks' documented options, each with a value a Databricks job would give and the options it needs beside
   * it. Kept apart from the table under test: a key Databricks documents and the table forgot fails here.
   */
  private val databricksJob: Seq[(String, String, Seq[(String, String)])] = Seq(
    ("streamName", "s", Nil),
    ("streamARN", "arn:aws:kinesis:us-east-1:123456789012:stream/s", Nil),
    ("region", "us-west-2", Nil),
    ("endpoint", "https://kinesis.us-west-2.amazonaws.com", Nil),
    ("initialPosition", "trim_horizon", Nil),
    ("awsAccessKey", "AKIAEXAMPLE", Seq("awsSecretKey" -> "secret")),
    ("awsSecretKey", "secret", Seq("awsAccessKey" -> "AKIAEXAMPLE")),
    ("roleArn", "arn:aws:iam::123456789012:role/r", Nil),
    ("roleExternalId", "ext", Role),
    ("roleSessionName", "job", Role),
    ("stsEndpoint", "https://sts.us-west-2.amazonaws.com", Role),
    ("serviceCredential", "kinesis-cred", Nil),
    ("maxRecordsPerFetch", "10000", Nil),
    ("maxFetchRate", "1.0", Nil),
    ("minFetchPeriod", "400ms", Nil),
    ("maxFetchDuration", "10s", Nil),
    ("fetchBufferSize", "20gb", Nil),
    ("shardsPerTask", "5", Nil),
    ("maxPartitions", "8", Nil),
    ("shardFetchInterval", "1s", Nil),
    ("maxShardsPerDescribe", "100", Nil),
    ("coalesceThresholdBlockSize", "10000000", Nil),
    ("coalesceBinSize", "128000000", Nil),
    ("consumerMode", "efo", Nil),
    ("consumerName", "app", Efo),
    ("consumerNamePrefix", "databricks_", Efo),
    ("registeredConsumerId", ConsumerArn, Efo),
    ("registeredConsumerIdType", "ARN", Efo :+ ("registeredConsumerId" -> ConsumerArn)),
    ("consumerRefreshInterval", "300s", Efo),
    ("requireConsumerDeregistration", "true", Efo),
    ("registerConsumerTimeoutInterval", "300s", Efo),
    ("deregisterConsumerTimeoutInterval", "300s", Efo),
    ("awsUseInstanceProfile", "true", Nil),
    ("avoidEmptyBatches", "false", Nil),
    ("reuseKinesisClient", "true", Nil)
  )

  private def source(kv: (String, String)*) = SourceConfig(OptionReader((("streamName" -> "s") +: kv).toMap))
  private def error(kv: (String, String)*): String = intercept[KinesisOptionException](source(kv: _*)).getMessage

  test("each Databricks option has a row, and only refused ones fail a Databricks job's values") {
    for ((key, value, beside) <- databricksJob) {
      val row = all.find(_.key.equalsIgnoreCase(key))
      assert(row.isDefined, s"Databricks' option '$key' has no row in DatabricksOptions")
      if (row.get.handling == Refused) {
        val msg = error((beside :+ (key -> value)): _*)
        assert(msg.contains(s"'$key'") && msg.contains(value), msg)
      } else {
        source((beside :+ (key -> value)): _*)
      }
    }
    assert(all.map(_.key.toLowerCase) == databricksJob.map(_._1.toLowerCase), "the table and the list differ")
  }

  test("serviceCredential is refused with its value and what to use instead") {
    assert(error("serviceCredential" -> "kinesis-cred") == "Option 'serviceCredential' (value 'kinesis-cred') is " +
      "Databricks' and not supported here: Unity Catalog service credentials exist only on Databricks: give roleArn " +
      "(the IAM role behind the credential, with roleExternalId if its trust policy wants one), awsProfile, or " +
      "awsAccessKey/awsSecretKey, or leave credentials to the AWS default chain.")
    // The sink reads the same options: a write is refused the same way.
    assert(intercept[KinesisOptionException](OptionReader(Map("serviceCredential" -> "c"))).getMessage
      .startsWith("Option 'serviceCredential' (value 'c')"))
  }

  test("Databricks keys are never reported as typos of ours, and their own typos are") {
    // maxShardsPerDescribe is 2 edits from no key of ours, consumerRefreshInterval neither: read, not guessed at.
    assert(OptionReader(Map("MAXSHARDSPERDESCRIBE" -> "100", "consumerRefreshInterval" -> "20s")).get(
      MaxShardsPerDescribe).contains("100"))
    assert(intercept[KinesisOptionException](OptionReader(Map("serviceCredentials" -> "c"))).getMessage ==
      "Unknown option 'serviceCredentials': did you mean 'serviceCredential'? Options are matched case-insensitively.")
    assert(intercept[KinesisOptionException](OptionReader(Map("maxPartition" -> "4"))).getMessage
      .contains("did you mean 'maxPartitions'"))
  }

  test("keys of other connectors once listed as Databricks' keep working, and say whose they are") {
    for (key <- Seq("awsUseInstanceProfile", "avoidEmptyBatches", "reuseKinesisClient")) {
      assert(all.find(_.key == key).exists(_.here.startsWith("not Databricks'")), key)
    }
    assert(source("awsUseInstanceProfile" -> "true").connection.credentials == CredentialsConfig.DefaultChain)
    assert(source((Keys :+ ("awsUseInstanceProfile" -> "false")): _*).connection.credentials ==
      CredentialsConfig.Static("AKIAEXAMPLE", "secret", None))
    assert(source("awsProfile" -> "dev", "awsUseInstanceProfile" -> "FALSE").connection.credentials ==
      CredentialsConfig.Profile("dev"))
    val msg = error("awsUseInstanceProfile" -> "false")
    assert(
      msg.startsWith("Option 'awsUseInstanceProfile' is false but no credentials are given: set 'awsAccessKey' " +
        "and 'awsSecretKey', or 'awsProfile'"),
      msg)
    assert(error("awsUseInstanceProfile" -> "yes").contains("'awsUseInstanceProfile': expected true or false"))
    assert(error(
      "avoidEmptyBatches" -> "maybe") == "Invalid value 'maybe' for option 'avoidEmptyBatches': expected true or false.")
    assert(error("reuseKinesisClient" -> "1").contains("expected true or false"))
  }

  test("options accepted without effect still check their values") {
    assert(
      error("coalesceBinSize" -> "big").startsWith("Invalid value 'big' for option 'coalesceBinSize': expected a size"))
    assert(error("coalesceThresholdBlockSize" -> "0").contains("'coalesceThresholdBlockSize': expected a size"))
    assert(error("maxShardsPerDescribe" -> "0") == "Invalid value '0' for option 'maxShardsPerDescribe': expected an integer in 1..10000.")
    assert(error("consumerRefreshInterval" -> "soon").contains("'consumerRefreshInterval': expected a duration"))
  }

  test("maxPartitions sets the number of tasks auto sizing aims at; never with shardsPerTask") {
    // 10 shards, Spark's default parallelism 64: one shard per task unless maxPartitions asks for fewer tasks.
    assert(source().shardsPerTaskFor(10, 64) == 1)
    assert(source("maxPartitions" -> "4").shardsPerTaskFor(10, 64) == 3)
    assert(source("maxPartitions" -> "100").shardsPerTaskFor(10, 2) == 1)
    assert(source("shardsPerTask" -> "2").shardsPerTaskFor(10, 64) == 2)
    assert(error("maxPartitions" -> "4", "shardsPerTask" -> "2") == "Options 'shardsPerTask' and 'maxPartitions' " +
      "both size the read tasks (Databricks does not take them together either): keep one.")
    assert(
      error("maxPartitions" -> "0") == "Invalid value '0' for option 'maxPartitions': expected an integer in 1..100000.")
    assert(error("maxPartitions" -> "many").contains("'maxPartitions': expected an integer"))
  }

  test("registeredConsumerIdType=name looks a consumer up by name; arn (the default) takes ARNs") {
    val byName =
      source((Efo ++ Seq("registeredConsumerIdType" -> "name", "registeredConsumerId" -> "shared")): _*).fanOut.get
    assert(byName.registeredConsumerName.contains("shared") && byName.registeredConsumers.isEmpty)
    val byArn =
      source((Efo ++ Seq("registeredConsumerIdType" -> "arn", "registeredConsumerId" -> ConsumerArn)): _*).fanOut.get
    assert(byArn.registeredConsumers == Seq(ConsumerArn) && byArn.registeredConsumerName.isEmpty)
    assert(error((Efo :+ ("registeredConsumerId" -> "shared")): _*)
      .contains("or set registeredConsumerIdType=name to give a consumer's name"))
    assert(error((Efo ++ Seq("registeredConsumerIdType" -> "name", "registeredConsumerId" -> ConsumerArn)): _*)
      .contains("ARNs need registeredConsumerIdType=arn"))
    assert(error((Efo ++ Seq("registeredConsumerIdType" -> "name", "registeredConsumerId" -> "a,b")): _*)
      .startsWith("Invalid value 'a,b' for option 'registeredConsumerId': expected one consumer name"))
    assert(error((Efo ++ Seq("registeredConsumerIdType" -> "name")): _*).startsWith(
      "Option 'registeredConsumerId' is required"))
    assert(error((Efo ++ Seq("registeredConsumerIdType" -> "name", "registeredConsumerId" -> "x", "consumerName" -> "y")): _*)
      .startsWith("Options 'consumerName' and 'registeredConsumerId' both name the consumer"))
    assert(error("registeredConsumerIdType" -> "name", "registeredConsumerId" -> "x")
      .contains("'registeredConsumerId' applies only with consumerMode=efo"))
    assert(error((Efo :+ ("registeredConsumerIdType" -> "id")): _*) ==
      "Invalid value 'id' for option 'registeredConsumerIdType': expected one of arn, name.")
  }

  private def at(json: String): InitialPosition = source("initialPosition" -> json).initialPosition
  private def millis(iso: String) = InitialPosition.AtTimestamp(Instant.parse(iso).toEpochMilli)

  test("initialPosition takes Databricks' JSON at_timestamp form, with or without a format") {
    // Zone names under "ZZZ", as Databricks' docs write them.
    assert(at("""{"at_timestamp": "06/25/2020 10:23:45 PDT", "format": "MM/dd/yyyy HH:mm:ss ZZZ"}""") == millis(
      "2020-06-25T17:23:45Z"))
    assert(at("""{"at_timestamp": "2024-03-01 08:00:00 +0100", "format": "yyyy-MM-dd HH:mm:ss Z"}""") == millis(
      "2024-03-01T07:00:00Z"))
    assert(at("""{"at_timestamp": "2024-03-01 08:00", "format": "yyyy-MM-dd HH:mm"}""") == millis("2024-03-01T08:00:00Z"))
    assert(at("""{"at_timestamp": "2025-01-31T12:00:00Z"}""") == millis("2025-01-31T12:00:00Z"))
    assert(at("""{"at_timestamp": "2025-01-31T13:00:00+01:00"}""") == millis("2025-01-31T12:00:00Z"))
    assert(at("""{"at_timestamp": "1738324800000"}""") == InitialPosition.AtTimestamp(1738324800000L))
    assert(at("""{"at_timestamp": 1738324800000}""") == InitialPosition.AtTimestamp(1738324800000L))
    assert(at("""{"at_timestamp": "01/31/2025 12:00:00 UTC"}""") == millis("2025-01-31T12:00:00Z"))
  }

  test("the JSON at_timestamp form names what went wrong; per-stream maps keep working") {
    val bad = """{"at_timestamp": "2020-06-25", "format": "MM/dd/yyyy"}"""
    assert(error("initialPosition" -> bad) == s"Invalid value '$bad' for option 'initialPosition': expected an " +
      """"at_timestamp" that the "format" pattern 'MM/dd/yyyy' (java.time.format.DateTimeFormatter) parses.""")
    assert(
      error("initialPosition" -> """{"at_timestamp": "soon"}""").contains("""an "at_timestamp" in epoch milliseconds"""))
    assert(error("initialPosition" -> """{"at_timestamp": "1", "zone": "UTC"}""").contains("(not zone)"))
    // A stream may be called at_timestamp: its entry is an object, so the map is per-shard positions.
    assert(SourceConfig(OptionReader(Map(
      "streamName" -> "at_timestamp,b",
      "initialPosition" ->
        """{"at_timestamp":{"shardId-0":{"after_sequence_number":"5"}}}"""))).initialPosition.isInstanceOf[
      InitialPosition.PerShard])
  }

  test("endingPosition: latest or at_timestamp with endingTimestamp, or a refusal naming what is accepted") {
    assert(source("endingPosition" -> "LATEST").endingPosition.contains(EndPosition.Latest))
    assert(source().endingPosition.isEmpty)
    SourceConfig.refuseEndingPositionForStreaming(source())
    assert(source("endingPosition" -> "at_timestamp", "endingTimestamp" -> "2025-01-31T12:00:00Z").endingPosition
      .contains(EndPosition.AtTimestamp(java.time.Instant.parse("2025-01-31T12:00:00Z").toEpochMilli)))
    assert(source("endingPosition" -> "AT_TIMESTAMP", "endingTimestamp" -> "1700000000000").endingPosition
      .contains(EndPosition.AtTimestamp(1700000000000L)))
    assert(error("endingPosition" -> "trim_horizon").startsWith("Invalid value 'trim_horizon' for option " +
      "'endingPosition': expected latest (the tip when the read starts), at_timestamp (with endingTimestamp"))
    val dated = """{"at_timestamp": "2025-01-31T12:00:00Z"}"""
    assert(
      error("endingPosition" -> dated).startsWith(s"Invalid value '$dated' for option 'endingPosition': expected " +
        "shard positions"),
      "an end time is given with endingTimestamp, not in Databricks' JSON form"
    )
    assert(error("endingPosition" -> "at_timestamp") ==
      "Option 'endingTimestamp' is required: set it to an ISO-8601 instant (2025-01-31T12:00:00Z) or epoch milliseconds.")
    assert(error("endingPosition" -> "at_timestamp", "endingTimestamp" -> "yesterday").startsWith(
      "Invalid value 'yesterday' for option 'endingTimestamp': expected an ISO-8601 instant"))
    val backwards = error(
      "initialPosition" -> "at_timestamp",
      "initialTimestamp" -> "2000",
      "endingPosition" -> "at_timestamp",
      "endingTimestamp" -> "1000")
    assert(
      backwards.startsWith("Invalid value '1000' for option 'endingTimestamp': expected a time after " +
        "initialTimestamp (1970-01-01T00:00:02Z): the read would end before it starts"),
      backwards
    )
    val json = """{"shardId-0": {"after_sequence_number": "7"}, "shardId-1": {"at_sequence_number": "9", "sub": 2}}"""
    val perShard = source("endingPosition" -> json).endingPosition
    assert(perShard.contains(EndPosition.PerShard(Map(
      io.github.sparkkinesis.source.ShardKey("s", "shardId-0") -> ShardPosition.After("7", Long.MaxValue),
      io.github.sparkkinesis.source.ShardKey("s", "shardId-1") -> ShardPosition.After("9", 1)
    ))))
    val offset = """{"version":1,"streams":{"s":{"shardId-0":{"after":"7","sub":3},"shardId-1":{"shard_end":true}}}}"""
    assert(source("endingPosition" -> offset).endingPosition.contains(EndPosition.PerShard(Map(
      io.github.sparkkinesis.source.ShardKey("s", "shardId-0") -> ShardPosition.After("7", 3),
      io.github.sparkkinesis.source.ShardKey("s", "shardId-1") -> ShardPosition.ShardEnd
    ))))
    val other = error("endingPosition" -> offset.replace("\"s\":", "\"t\":"))
    assert(other.contains("expected an offset of the streams read (s), not of t"), other)
    assert(error("endingPosition" -> """{"shardId-0": {"at_sequence_number": "x"}}""").contains(
      "for option 'endingPosition': expected sequence numbers as strings of digits"))
    val msg = intercept[KinesisOptionException](
      SourceConfig.refuseEndingPositionForStreaming(source("endingPosition" -> "latest"))).getMessage
    assert(
      msg == "Option 'endingPosition' (value 'latest') bounds batch reads and Trigger.AvailableNow: remove it, " +
        "or run the streaming query with Trigger.AvailableNow.",
      msg
    )
  }

}
