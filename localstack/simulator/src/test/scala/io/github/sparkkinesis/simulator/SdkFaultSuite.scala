package io.github.sparkkinesis.simulator

import java.io.IOException
import java.time.Duration

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.core.exception.{ApiCallAttemptTimeoutException, SdkClientException}
import software.amazon.awssdk.services.kinesis.model._

import scala.jdk.CollectionConverters._

/**
 * Faults and quotas as the AWS SDK for Java v2 (what the connector uses) reports them: the exception classes and
 * status codes its retry policy keys on, connection resets and timeouts as client-side exceptions.
 */
class SdkFaultSuite extends AnyFunSuite with SimulatorFixture {

  private def put(stream: String, key: String = "k") = kinesis.putRecord(PutRecordRequest.builder().streamName(stream)
    .partitionKey(key).data(SdkBytes.fromUtf8String("x")).build())

  private def summary(stream: String) =
    kinesis.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())

  test("HTTP 500 and 503 reach the SDK as retryable service errors") {
    val stream = newStreamName()
    createStream(stream, 1)
    admin.faults("""[{"kind": "http500", "operations": ["PutRecord"], "maxCount": 1},
                      |{"kind": "http503", "operations": ["PutRecord"], "maxCount": 1}]""".stripMargin)
    val internal = intercept[KinesisException](put(stream))
    assert(internal.statusCode() == 500 && internal.awsErrorDetails().errorCode() == "InternalFailure")
    val unavailable = intercept[KinesisException](put(stream))
    assert(unavailable.statusCode() == 503)
    put(stream)
    assert(admin.operationCounter("PutRecord", "faults") == 2)

    // The SDK's standard retry strategy treats both as retryable: one call, three attempts, success.
    admin.faults("""[{"kind": "http500", "operations": ["PutRecord"], "maxCount": 1},
                      |{"kind": "http503", "operations": ["PutRecord"], "maxCount": 1}]""".stripMargin)
    val retrying = SdkClients.kinesis(server.endpoint, retries = true)
    try retrying.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("k")
      .data(SdkBytes.fromUtf8String("x")).build())
    finally retrying.close()
    assert(admin.operationCounter("PutRecord", "faults") == 4)
  }

  test("a connection reset is a client-side IO failure, and the next call works") {
    val stream = newStreamName()
    createStream(stream, 1)
    admin.faults("""[{"kind": "reset", "operations": ["PutRecord"], "maxCount": 1}]""")
    val e = intercept[SdkClientException](put(stream))
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(_.isInstanceOf[IOException]), e)
    put(stream)
  }

  test("a hung request ends with the SDK's attempt timeout") {
    val stream = newStreamName()
    createStream(stream, 1)
    val impatient = SdkClients.kinesis(server.endpoint, Duration.ofMillis(500))
    try {
      admin.faults("""[{"kind": "hang", "operations": ["DescribeStreamSummary"], "hangMillis": 5000, "maxCount": 1}]""")
      intercept[ApiCallAttemptTimeoutException] {
        impatient.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
      }
      assert(impatient.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
        .streamDescriptionSummary().streamName() == stream)
    } finally impatient.close()
  }

  test("per-record InternalFailure and throttling inside one PutRecords") {
    admin.settings("""{"quotas": {"enabled": true, "factor": 0.01}}""") // 10 records/s per shard
    val stream = newStreamName()
    createStream(stream, 1)
    admin.faults("""[{"kind": "recordFailure", "partitionKeys": ["poison"]}]""")
    val entries = (Seq("poison") ++ (1 to 19).map(i => s"k$i")).map(k =>
      PutRecordsRequestEntry.builder().partitionKey(k).data(SdkBytes.fromUtf8String(k)).build())
    val response = kinesis.putRecords(PutRecordsRequest.builder().streamName(stream).records(entries.asJava).build())
    val codes = response.records().asScala.map(r => Option(r.errorCode()))
    assert(codes.head.contains("InternalFailure"))
    assert(codes.tail.take(10).forall(_.isEmpty))
    assert(codes.drop(11).forall(_.contains("ProvisionedThroughputExceededException")))
    assert(response.failedRecordCount() == 10)
  }

  test("read throttling and DescribeStreamSummary limits map to their SDK exceptions") {
    admin.settings("""{"quotas": {"enabled": true, "factor": 0.2}}""") // 1 GetRecords/s, 4 DescribeStreamSummary/s
    val stream = newStreamName()
    val Seq(shard) = createStream(stream, 1)
    val it = kinesis.getShardIterator(GetShardIteratorRequest.builder().streamName(stream).shardId(shard)
      .shardIteratorType(ShardIteratorType.LATEST).build()).shardIterator()
    kinesis.getRecords(GetRecordsRequest.builder().shardIterator(it).build())
    intercept[ProvisionedThroughputExceededException](kinesis.getRecords(GetRecordsRequest.builder().shardIterator(it).build()))
    intercept[LimitExceededException]((1 to 10).foreach(_ => summary(stream)))
    assert(admin.shardCounter(stream, shard, "throttledGetRecordsCalls") == 1)
  }

  test("the admin API refuses what it does not know") {
    val e = intercept[IllegalArgumentException](admin.settings("""{"quotas": {"factr": 2}}"""))
    assert(e.getMessage.contains("factr"))
    intercept[IllegalArgumentException](admin.faults("""[{"kind": "meteor"}]"""))
    intercept[IllegalArgumentException](admin.deleteStream("never-created"))
  }
}
