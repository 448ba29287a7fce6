package io.github.sparkkinesis

import io.github.sparkkinesis.source.SourceConfig
import java.time.Instant

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.options.{KinesisOptionException, KinesisOptions, OptionReader}
import org.scalatest.funsuite.AnyFunSuite

class KinesisSourcesSuite extends AnyFunSuite {
  test("every builder method sets the option of the table it names, and options() is exactly that map") {
    val b = KinesisSources.kinesis("clicks")
      .withRegion("eu-west-1").withEndpoint("http://127.0.0.1:4566").withCredentials("AKIA", "secret", "token")
      .withInitialTimestamp(Instant.parse("2025-01-31T12:00:00Z")).withMaxRecordsPerFetch(500).withMaxFetchRate(1.5)
      .withMinFetchPeriod("250ms").withMaxFetchDuration("5s").withMaxRecordsPerTrigger(1000).withMaxBytesPerTrigger(
        1L << 20)
      .withShardsPerTask(2).withShardFetchInterval("2s").withFailOnDataLoss(false).withRoleArn(
        "arn:aws:iam::1:role/r",
        "ext")
      .withFetchBufferSize("64m")
      .withMaxIdlePollInterval("2s")
    assert(b.options().asScala == Map(
      "streamName" -> "clicks",
      "region" -> "eu-west-1",
      "endpoint" -> "http://127.0.0.1:4566",
      "awsAccessKey" -> "AKIA",
      "awsSecretKey" -> "secret",
      "awsSessionToken" -> "token",
      "initialPosition" -> "at_timestamp",
      "initialTimestamp" -> "1738324800000",
      "maxRecordsPerFetch" -> "500",
      "maxFetchRate" -> "1.5",
      "minFetchPeriod" -> "250ms",
      "maxFetchDuration" -> "5s",
      "maxRecordsPerTrigger" -> "1000",
      "maxBytesPerTrigger" -> "1048576",
      "shardsPerTask" -> "2",
      "shardFetchInterval" -> "2s",
      "failOnDataLoss" -> "false",
      "fetchBufferSize" -> "64m",
      "maxIdlePollInterval" -> "2s",
      "roleArn" -> "arn:aws:iam::1:role/r",
      "roleExternalId" -> "ext"
    ))
    assert(b.options().asScala.keySet.forall(k => KinesisOptions.find(k).isDefined), "only keys of the option table")
    // and they are all valid together (those this Spark line lacks are refused: SparkLineSourceSuite)
    SourceConfig(OptionReader(b.options().asScala.toMap -- SparkLineOptions.refused))
  }

  test("a later setting replaces an earlier one whatever its case, and builders are immutable") {
    val first = KinesisSources.kinesis("s").withOption("REGION", "us-west-2")
    val second = first.withRegion("eu-west-1")
    assert(second.options().asScala.get("region").contains("eu-west-1") && !second.options().containsKey("REGION"))
    assert(first.options().get("REGION") == "us-west-2")
  }

  test("the printed builder hides secrets") {
    val printed = KinesisSources.kinesis("s").withCredentials("AKIA", "very-secret").toString
    assert(!printed.contains("very-secret") && !printed.contains("AKIA") && printed.contains("KinesisSourceBuilder"))
  }

  test("validation messages are the option table's") {
    val e = intercept[KinesisOptionException](SourceConfig(OptionReader(
      KinesisSources.kinesis("s").withMaxRecordsPerFetch(0).options().asScala.toMap)))
    assert(e.getMessage == "Invalid value '0' for option 'maxRecordsPerFetch': expected an integer in 1..10000.")
  }
}
