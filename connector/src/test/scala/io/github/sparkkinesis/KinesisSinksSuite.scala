package io.github.sparkkinesis

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** The builder writes options, nothing else: what `options()` shows is what a query gets. */
class KinesisSinksSuite extends AnyFunSuite {
  test("each builder method maps to its option") {
    val options = KinesisSinks.kinesis("events")
      .withRegion("eu-west-1")
      .withEndpoint("http://127.0.0.1:4566")
      .withCredentials("AKIDEXAMPLE", "secret", "token")
      .withRetryStrategy(RetryStrategies.exponential(50, 2000, 7))
      .withMaxRecordsPerRequest(250)
      .withMaxBytesPerRequest(5L * 1024 * 1024)
      .withMaxInFlightRequests(8)
      .withPreserveKeyOrder(true)
      .withClusterByPartitionKey(true)
      .withFlowControl("aimd")
      .withOption("apiCallAttemptTimeout", "5s")
      .options().asScala.toMap
    assert(options == Map(
      "streamName" -> "events",
      "region" -> "eu-west-1",
      "endpoint" -> "http://127.0.0.1:4566",
      "awsAccessKey" -> "AKIDEXAMPLE",
      "awsSecretKey" -> "secret",
      "awsSessionToken" -> "token",
      "retryMaxAttempts" -> "7",
      "retryInitialBackoff" -> "50ms",
      "retryMaxBackoff" -> "2000ms",
      "maxRecordsPerRequest" -> "250",
      "maxBytesPerRequest" -> "5242880",
      "maxInFlightRequests" -> "8",
      "preserveKeyOrder" -> "true",
      "clusterByPartitionKey" -> "true",
      "flowControl" -> "aimd",
      "apiCallAttemptTimeout" -> "5s"
    ))
  }

  test("withAggregation sets aggregation=kpl, with or without its limits") {
    assert(KinesisSinks.kinesis("s").withAggregation().options().asScala.toMap ==
      Map("streamName" -> "s", "aggregation" -> "kpl"))
    assert(KinesisSinks.kinesis("s").withAggregation(65536, 200, 50).options().asScala.toMap == Map(
      "streamName" -> "s",
      "aggregation" -> "kpl",
      "aggregationMaxBytes" -> "65536",
      "aggregationMaxRecords" -> "200",
      "aggregationLingerMs" -> "50"))
  }

  test("only the stream name is mandatory; builders are immutable") {
    val base = KinesisSinks.kinesis("s")
    assert(base.options().asScala.toMap == Map("streamName" -> "s"))
    base.withRegion("us-west-2")
    assert(base.options().size == 1)
  }

  test("retry strategies map to the three retry options") {
    assert(RetryStrategies.indefinitely(250).options ==
      Map("retryMaxAttempts" -> "unlimited", "retryInitialBackoff" -> "250ms", "retryMaxBackoff" -> "250ms"))
    assert(RetryStrategies.defaultStrategy.options ==
      Map("retryMaxAttempts" -> "unlimited", "retryInitialBackoff" -> "100ms", "retryMaxBackoff" -> "3000ms"))
    assert(RetryStrategies.exponential(10, 20).options("retryMaxAttempts") == "unlimited")
    assert(intercept[IllegalArgumentException](RetryStrategies.exponential(100, 50, 3)).getMessage ==
      "RetryStrategy: the max backoff (retryMaxBackoff, 50 ms) is below the initial backoff (retryInitialBackoff, " +
      "100 ms): give a max at least the initial")
    assert(intercept[IllegalArgumentException](RetryStrategies.exponential(100, 500, 0)).getMessage ==
      "RetryStrategy: maxAttempts (retryMaxAttempts) must be at least 1, got 0")
    assert(intercept[IllegalArgumentException](RetryStrategies.indefinitely(0)).getMessage ==
      "RetryStrategy: the initial backoff (retryInitialBackoff) must be at least 1 ms, got 0 ms")
  }

  test("the options a retry strategy writes read back as the same retry policy") {
    val config = options.OptionReader(RetryStrategies.exponential(50, 2000, 7).options).connection.retry
    assert(config == client.RetryConfig(Some(7), java.time.Duration.ofMillis(50), java.time.Duration.ofMillis(2000)))
  }

  test("a later setting of the same key wins, whatever its case") {
    val options = KinesisSinks.kinesis("s").withOption("REGION", "us-west-2").withRegion("eu-west-1").options()
    assert(options.asScala.toMap == Map("streamName" -> "s", "region" -> "eu-west-1"))
  }

  test("Java callers get the same builder and options") {
    assert(KinesisSinksFromJava.options().asScala.toMap == Map(
      "streamName" -> "events",
      "region" -> "eu-west-1",
      "retryMaxAttempts" -> "unlimited",
      "retryInitialBackoff" -> "250ms",
      "retryMaxBackoff" -> "250ms",
      "maxInFlightRequests" -> "2",
      "preserveKeyOrder" -> "true",
      "aggregation" -> "kpl",
      "aggregationMaxBytes" -> "65536",
      "aggregationMaxRecords" -> "500",
      "aggregationLingerMs" -> "50"
    ))
    assert(KinesisSinksFromJava.defaultRetryOptions().get("retryMaxBackoff") == "3000ms")
  }

  test("the printed builder hides secrets") {
    val shown = KinesisSinks.kinesis("s").withCredentials("AKIDEXAMPLE", "very-secret").toString
    assert(!shown.contains("very-secret") && !shown.contains("AKIDEXAMPLE"), shown)
  }
}
