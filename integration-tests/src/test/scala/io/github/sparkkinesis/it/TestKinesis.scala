package io.github.sparkkinesis.it

import java.net.URI
import java.time.{Duration, Instant}

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.apache5.Apache5HttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * The tests' own Kinesis client: the plain, unshaded SDK, independent of the jar under test, so that what a test
 * puts and reads back as ground truth does not depend on the code it checks.
 */
final class TestKinesis(endpoint: URI) extends AutoCloseable {
  val client: KinesisClient = builder().build()

  /**
   * For the tests' control-plane steps (create, reshard, list, wait): throttled calls are retried without the
   * standard strategy's retry quota, which runs dry when a test reshards in a loop beside the source under test.
   * ListShards' per-stream rate is answered with LimitExceededException, which the SDK does not retry on its own.
   * `client` keeps the SDK's defaults, so a test can see throttling surface.
   */
  val control: KinesisClient = builder().overrideConfiguration((o: ClientOverrideConfiguration.Builder) =>
    o.retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder.maxAttempts(10).circuitBreakerEnabled(false)
      .retryOnException(classOf[LimitExceededException]).build())).build()

  private def builder() = KinesisClient.builder()
    .endpointOverride(endpoint)
    .region(Region.of(TestEnv.region))
    .credentialsProvider(StaticCredentialsProvider.create(
      AwsBasicCredentials.create(TestEnv.accessKey, TestEnv.secretKey)))
    .httpClientBuilder(Apache5HttpClient.builder())

  /** Creates a stream and waits until it is ACTIVE. */
  def createStream(name: String, shards: Int, timeout: Duration = Duration.ofSeconds(30)): Unit = {
    control.createStream(CreateStreamRequest.builder().streamName(name).shardCount(shards).build())
    awaitActive(name, timeout)
  }

  def awaitActive(name: String, timeout: Duration): Unit = {
    val deadline = Instant.now().plus(timeout)
    def status: StreamStatus =
      control.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(name).build())
        .streamDescriptionSummary().streamStatus()
    while (status != StreamStatus.ACTIVE) {
      require(Instant.now().isBefore(deadline), s"stream $name not ACTIVE after $timeout")
      Thread.sleep(50)
    }
  }

  def shardIds(name: String): Seq[String] =
    control.listShards(ListShardsRequest.builder().streamName(name).build()).shards().asScala.map(_.shardId()).toSeq

  def put(name: String, partitionKey: String, data: Array[Byte]): PutRecordResponse =
    client.putRecord(PutRecordRequest.builder().streamName(name).partitionKey(partitionKey)
      .data(SdkBytes.fromByteArray(data)).build())

  /** Puts records one by one (so each key's records keep their order) and returns what Kinesis assigned. */
  def putAll(name: String, records: Seq[(String, String)]): Seq[PutRecordResult] = records.map { case (key, data) =>
    val r = put(name, key, data.getBytes("UTF-8"))
    PutRecordResult(key, data, r.shardId(), r.sequenceNumber())
  }

  /** Puts records in one PutRecords request (at most 500), so they arrive together; fails if any was refused. */
  def putInOneRequest(name: String, records: Seq[(String, String)]): Seq[PutRecordResult] = {
    val entries = records.map { case (key, data) =>
      PutRecordsRequestEntry.builder().partitionKey(key).data(SdkBytes.fromUtf8String(data)).build()
    }
    val response = client.putRecords(PutRecordsRequest.builder().streamName(name).records(entries.asJava).build())
    require(response.failedRecordCount() == 0, s"${response.failedRecordCount()} of ${records.size} records refused")
    records.zip(response.records().asScala).map { case ((key, data), r) =>
      PutRecordResult(key, data, r.shardId(), r.sequenceNumber())
    }
  }

  /** The arrival times of a shard's records, read from its trim horizon (up to 10,000 records). */
  def arrivalMillis(name: String, shardId: String): Seq[Long] = {
    val iterator = client.getShardIterator(GetShardIteratorRequest.builder().streamName(name).shardId(shardId)
      .shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
    client.getRecords(GetRecordsRequest.builder().shardIterator(iterator).build()).records().asScala
      .map(_.approximateArrivalTimestamp().toEpochMilli).toSeq
  }

  def split(name: String, shardId: String): Unit = {
    val shard = control.listShards(ListShardsRequest.builder().streamName(name).build()).shards().asScala
      .find(_.shardId() == shardId).getOrElse(throw new IllegalArgumentException(s"no shard $shardId"))
    val range = shard.hashKeyRange()
    val middle = (BigInt(range.startingHashKey()) + BigInt(range.endingHashKey())) / 2
    control.splitShard(SplitShardRequest.builder().streamName(name).shardToSplit(shardId)
      .newStartingHashKey(middle.toString).build())
    awaitActive(name, Duration.ofSeconds(30))
  }

  def merge(name: String, shardId: String, adjacentShardId: String): Unit = {
    control.mergeShards(MergeShardsRequest.builder().streamName(name).shardToMerge(shardId)
      .adjacentShardToMerge(adjacentShardId).build())
    awaitActive(name, Duration.ofSeconds(30))
  }

  override def close(): Unit = { client.close(); control.close() }
}

object TestKinesis {
  /** A stream name no other test uses (the emulator slows down as shards fill, so tests never share one). */
  def freshName(prefix: String): String = s"$prefix-${java.util.UUID.randomUUID().toString.take(8)}"
}

/** What the producer side knows about a record it put: the ground truth tests compare the source with. */
final case class PutRecordResult(partitionKey: String, data: String, shardId: String, sequenceNumber: String)
