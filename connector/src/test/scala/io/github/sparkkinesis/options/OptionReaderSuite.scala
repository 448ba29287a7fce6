package io.github.sparkkinesis.options

import java.net.URI
import java.time.Duration

import io.github.sparkkinesis.client.{CredentialsConfig, RetryConfig, TimeoutConfig}
import org.scalatest.funsuite.AnyFunSuite

class OptionReaderSuite extends AnyFunSuite {
  import KinesisOptions._

  private def reader(kv: (String, String)*) = OptionReader(kv.toMap)
  private def error(kv: (String, String)*)(read: OptionReader => Any): String =
    intercept[KinesisOptionException](read(reader(kv: _*))).getMessage

  test("keys are matched case-insensitively") {
    assert(reader("STREAMNAME" -> "events").streamNames == Seq("events"))
  }

  test("a typo of a known key is reported with the key it resembles") {
    val msg = intercept[KinesisOptionException](reader("streamNmae" -> "x")).getMessage
    assert(msg == "Unknown option 'streamNmae': did you mean 'streamName'? Options are matched case-insensitively.")
    assert(intercept[KinesisOptionException](reader("maxRecordPerFetch" -> "5")).getMessage
      .contains("did you mean 'maxRecordsPerFetch'"))
  }

  test("keys unlike any of ours are left alone (other layers' options pass through)") {
    reader("path" -> "/tmp", "checkpointLocation" -> "/tmp/cp", "queryName" -> "q")
  }

  test("the stream name is required, and several can be given") {
    assert(error()(_.streamNames) == "Option 'streamName' is required: set it to the name of a Kinesis stream " +
      "(or several, comma-separated), or give streamARN.")
    assert(reader("streamName" -> " a, b ,a").streamNames == Seq("a", "b"))
    assert(error("streamName" -> "a,,b")(_.streamNames).contains("none empty"))
    assert(error("streamName" -> "bad name")(_.streamNames).contains("('bad name' is not)"))
  }

  test("integers, durations, sizes and booleans are checked against their range") {
    assert(reader("maxRecordsPerFetch" -> "500").int(MaxRecordsPerFetch, 1, 10000).contains(500))
    assert(error("maxRecordsPerFetch" -> "10001")(_.int(MaxRecordsPerFetch, 1, 10000)) ==
      "Invalid value '10001' for option 'maxRecordsPerFetch': expected an integer in 1..10000.")
    assert(error("maxRecordsPerFetch" -> "many")(_.int(MaxRecordsPerFetch, 1, 10000)).contains("'many'"))
    assert(reader("minFetchPeriod" -> "250ms").duration(MinFetchPeriod).contains(Duration.ofMillis(250)))
    assert(reader("minFetchPeriod" -> "2s").duration(MinFetchPeriod).contains(Duration.ofSeconds(2)))
    assert(reader("minFetchPeriod" -> "300").duration(MinFetchPeriod).contains(Duration.ofMillis(300)))
    assert(error("minFetchPeriod" -> "soon")(_.duration(MinFetchPeriod)).contains("a duration such as 200ms"))
    assert(reader("maxBytesPerRequest" -> "5m").bytes(MaxBytesPerRequest, 1, 10L << 20).contains(5L << 20))
    assert(error("maxBytesPerRequest" -> "11m")(_.bytes(MaxBytesPerRequest, 1, 10L << 20)).contains(
      "between 1 and 10485760 bytes"))
    assert(reader("failOnDataLoss" -> "FALSE").boolean(FailOnDataLoss).contains(false))
    assert(error("failOnDataLoss" -> "no")(_.boolean(FailOnDataLoss)).contains("expected true or false"))
    assert(reader("consumerMode" -> "EFO").oneOf(ConsumerMode, Seq("polling", "efo")).contains("efo"))
    assert(error("consumerMode" -> "push")(_.oneOf(ConsumerMode, Seq("polling", "efo"))) ==
      "Invalid value 'push' for option 'consumerMode': expected one of polling, efo.")
  }

  test("connection options build the client configuration, with documented defaults") {
    val c = reader(
      "region" -> "eu-west-1",
      "endpoint" -> "http://127.0.0.1:4566",
      "awsAccessKey" -> "AKIAEXAMPLE",
      "awsSecretKey" -> "secret",
      "retryMaxAttempts" -> "5",
      "retryMaxBackoff" -> "10s",
      "apiCallAttemptTimeout" -> "5s"
    ).connection
    assert(c.region.contains("eu-west-1"))
    assert(c.endpoint.contains(URI.create("http://127.0.0.1:4566")))
    assert(c.credentials == CredentialsConfig.Static("AKIAEXAMPLE", "secret", None))
    assert(c.retry == RetryConfig(Some(5), Duration.ofMillis(100), Duration.ofSeconds(10)))
    assert(c.timeouts == TimeoutConfig(Duration.ofSeconds(10), Duration.ofSeconds(5), None))
    val d = reader().connection
    assert(d.credentials == CredentialsConfig.DefaultChain)
    assert(d.retry == RetryConfig.default && d.timeouts == TimeoutConfig.default)
    assert(reader("retryMaxAttempts" -> "unlimited").connection.retry.maxAttempts.isEmpty)
  }

  test("credential options must be complete and unambiguous") {
    assert(error("awsAccessKey" -> "AKIA")(_.connection).contains("'awsSecretKey' is not: set both"))
    assert(error("awsAccessKey" -> "AKIA", "awsSecretKey" -> "s", "awsProfile" -> "p")(_.connection).contains("keep one"))
    assert(error("roleExternalId" -> "x")(_.connection).contains("only applies with 'roleArn'"))
    val role = reader("roleArn" -> "arn:aws:iam::123456789012:role/r", "awsProfile" -> "dev").connection.credentials
    assert(role == CredentialsConfig.AssumeRole(
      "arn:aws:iam::123456789012:role/r",
      None,
      "spark-kinesis",
      None,
      CredentialsConfig.Profile("dev")))
  }

  test("bad endpoints and regions name the option and the accepted form") {
    assert(error("endpoint" -> "localhost:4566")(_.connection).startsWith(
      "Invalid value 'localhost:4566' for option 'endpoint'"))
    assert(error("region" -> "Europe")(_.connection).contains("an AWS region name such as us-east-1"))
  }

  test("secret values never appear in messages or in the printed options") {
    val secret = "wJalrXUtnFEMI/K7MDENG"
    assert(!error("awsSecretKey" -> secret)(r => r.fail(AwsSecretKey, secret, "x")).contains(secret))
    val printed = reader("awsAccessKey" -> "AKIA", "AWSSECRETKEY" -> secret, "streamName" -> "s").toString
    assert(!printed.contains(secret) && printed.contains("streamName -> s"))
  }
}
