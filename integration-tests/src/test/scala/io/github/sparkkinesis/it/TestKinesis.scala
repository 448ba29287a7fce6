package io.github.sparkkinesis.it

import java.net.URI
import java.time.{Duration, Instant}

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.http.apache5.Apache5HttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * The tests' own Kinesis client: the plain, unshaded SDK, independent of the jar under test, so that what a test
 * puts and reads back as ground truth does not depend on the code it checks.
 */
final class TestKinesis(endpoint: URI) extends AutoCloseable {
  val client: KinesisClient = KinesisClient.builder()
    .endpointOverride(endpoint)
    .region(Region.of(TestEnv.region))
    .credentialsProvider(StaticCredentialsProvider.create(
      AwsBasicCredentials.create(TestEnv.accessKey, TestEnv.secretKey)))
    .httpClientBuilder(Apache5HttpClient.builder())
    .build()

  /** Creates a stream and waits until it is ACTIVE. */
  def createStream(name: String, shards: Int, timeout: Duration = Duration.ofSeconds(30)): Unit = {
    client.createStream(CreateStreamRequest.builder().streamName(name).shardCount(shards).build())
    awaitActive(name, timeout)
  }

  def awaitActive(name: String, timeout: Duration): Unit = {
    val deadline = Instant.now().plus(timeout)
    def status: StreamStatus =
      client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(name).build())
        .streamDescriptionSummary().streamStatus()
    while (status != StreamStatus.ACTIVE) {
      require(Instant.now().isBefore(deadline), s"stream $name not ACTIVE after $timeout")
      Thread.sleep(50)
    }
  }

  def shardIds(name: String): Seq[String] =
    client.listShards(ListShardsRequest.builder().streamName(name).build()).shards().asScala.map(_.shardId()).toSeq

  def put(name: String, partitionKey: String, data: Array[Byte]): PutRecordResponse =
    client.putRecord(PutRecordRequest.builder().streamName(name).partitionKey(partitionKey)
      .data(SdkBytes.fromByteArray(data)).build())

  override def close(): Unit = client.close()
}
