package io.github.sparkkinesis.simulator

import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.http.Protocol
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model._

import scala.jdk.CollectionConverters._

/**
 * The AWS SDK for Java v2 (CBOR on the wire, its default) reads what it wrote, and maps the simulator's errors to
 * its exception classes. boto3 covers the JSON side in the conformance suite (localstack/tests).
 */
class SdkWireSuite extends AnyFunSuite with SimulatorFixture {

  private def iterator(stream: String, shard: String, tpe: ShardIteratorType, seq: String = null, at: Instant = null) =
    kinesis.getShardIterator(GetShardIteratorRequest.builder().streamName(stream).shardId(shard)
      .shardIteratorType(tpe).startingSequenceNumber(seq).timestamp(at).build()).shardIterator()

  private def read(it: String, limit: Int = 10000) =
    kinesis.getRecords(GetRecordsRequest.builder().shardIterator(it).limit(limit).build())

  test("records round-trip through CBOR: bytes, partition key, sequence number and arrival time") {
    val stream = newStreamName()
    val Seq(shard) = createStream(stream, 1)
    val before = Instant.now().minusMillis(1)
    val payload = Array.tabulate[Byte](256)(_.toByte)
    val put = kinesis.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("k")
      .data(SdkBytes.fromByteArray(payload)).build())
    val after = Instant.now().plusMillis(1)
    assert(put.shardId() == shard)
    val got = read(iterator(stream, shard, ShardIteratorType.TRIM_HORIZON))
    val record = got.records().asScala.loneElement
    assert(record.data().asByteArray().sameElements(payload))
    assert(record.partitionKey() == "k")
    assert(record.sequenceNumber() == put.sequenceNumber())
    val arrival = record.approximateArrivalTimestamp()
    assert(!arrival.isBefore(before.truncatedTo(java.time.temporal.ChronoUnit.MILLIS)) && !arrival.isAfter(after), arrival)
    assert(got.millisBehindLatest() == 0L)
    assert(got.nextShardIterator() != null)
    val formats = admin.counters().path("requestsByFormat")
    assert(formats.path("cbor").asLong() >= 4 && !formats.has("json"), formats)
  }

  test("AT_TIMESTAMP sent by the SDK (CBOR tag 1) positions at the first record at or after it") {
    val stream = newStreamName()
    val Seq(shard) = createStream(stream, 1)
    val first = kinesis.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("a")
      .data(SdkBytes.fromUtf8String("first")).build())
    val firstArrival = read(iterator(stream, shard, ShardIteratorType.TRIM_HORIZON)).records().get(0).approximateArrivalTimestamp()
    awaitClockPast(firstArrival)
    val cut = Instant.now()
    awaitClockPast(cut)
    kinesis.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("a")
      .data(SdkBytes.fromUtf8String("second")).build())
    val fromCut = read(iterator(stream, shard, ShardIteratorType.AT_TIMESTAMP, at = cut)).records().asScala
    assert(fromCut.map(_.data().asUtf8String()) == Seq("second"))
    val fromStart = read(iterator(stream, shard, ShardIteratorType.AT_TIMESTAMP, at = firstArrival)).records().asScala
    assert(fromStart.map(_.sequenceNumber()).head == first.sequenceNumber())
  }

  test("the maximum record size is reported by DescribeStreamSummary and enforced per stream") {
    val stream = newStreamName()
    kinesis.createStream(CreateStreamRequest.builder().streamName(stream).shardCount(1).maxRecordSizeInKiB(2048).build())
    val summary = kinesis.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(stream).build())
      .streamDescriptionSummary()
    assert(summary.maxRecordSizeInKiB() == 2048)
    assert(summary.openShardCount() == 1)
    val big = SdkBytes.fromByteArray(new Array[Byte](2048 * 1024 - 1))
    kinesis.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("k").data(big).build())
    val tooBig = SdkBytes.fromByteArray(new Array[Byte](2048 * 1024))
    intercept[InvalidArgumentException] {
      kinesis.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("k").data(tooBig).build())
    }
  }

  test("errors map to the SDK's exception classes") {
    intercept[ResourceNotFoundException] {
      kinesis.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(newStreamName("missing")).build())
    }
    val stream = newStreamName()
    createStream(stream, 1)
    intercept[ResourceInUseException] {
      kinesis.createStream(CreateStreamRequest.builder().streamName(stream).shardCount(1).build())
    }
    intercept[InvalidArgumentException](read("bm90IGFuIGl0ZXJhdG9y"))
    val tooMany = (0 to 500).map(i => PutRecordsRequestEntry.builder().partitionKey(s"k$i")
      .data(SdkBytes.fromUtf8String("x")).build()).asJava
    val e = intercept[KinesisException] {
      kinesis.putRecords(PutRecordsRequest.builder().streamName(stream).records(tooMany).build())
    }
    assert(e.awsErrorDetails().errorCode() == "ValidationException")
    assert(e.statusCode() == 400)
  }

  test("a StreamARN is checked, never reduced to its name: another account's stream is reached only by its ARN") {
    val stream = newStreamName()
    createStream(stream, 1)
    val theirs = admin.createStreamInAccount("111122223333", stream, 1)
    val ours = s"arn:aws:kinesis:us-east-1:000000000000:stream/$stream"
    def put(request: PutRecordsRequest.Builder) = kinesis.putRecords(request.records(PutRecordsRequestEntry.builder()
      .partitionKey("k").data(SdkBytes.fromUtf8String("x")).build()).build())
    put(PutRecordsRequest.builder().streamARN(theirs))
    put(PutRecordsRequest.builder().streamARN(theirs))
    put(PutRecordsRequest.builder().streamName(stream))
    def records(arn: String) = {
      val shard = kinesis.listShards(ListShardsRequest.builder().streamARN(arn).build()).shards().asScala.loneElement
      read(kinesis.getShardIterator(GetShardIteratorRequest.builder().streamARN(arn).shardId(shard.shardId())
        .shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()).records().size
    }
    assert(records(theirs) == 2 && records(ours) == 1)
    assert(kinesis.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamARN(theirs).build())
      .streamDescriptionSummary().streamARN() == theirs)
    assert(!kinesis.listStreams(ListStreamsRequest.builder().build()).streamSummaries().asScala.exists(_.streamARN() == theirs))
    intercept[ResourceNotFoundException](put(PutRecordsRequest.builder()
      .streamARN(s"arn:aws:kinesis:us-east-1:444455556666:stream/$stream")))
    intercept[ResourceNotFoundException](put(PutRecordsRequest.builder()
      .streamARN(s"arn:aws:kinesis:eu-west-1:111122223333:stream/$stream")))
  }

  test("a split closes the parent: reading it to the end gives ChildShards and no next iterator") {
    val stream = newStreamName()
    val Seq(parent) = createStream(stream, 1)
    kinesis.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("p")
      .data(SdkBytes.fromUtf8String("before split")).build())
    kinesis.splitShard(SplitShardRequest.builder().streamName(stream).shardToSplit(parent)
      .newStartingHashKey(HashKeys.uniformStart(1, 2).toString).build())
    val first = read(iterator(stream, parent, ShardIteratorType.TRIM_HORIZON))
    assert(first.records().asScala.map(_.data().asUtf8String()) == Seq("before split"))
    assert(first.nextShardIterator() == null)
    val children = first.childShards().asScala
    assert(children.map(_.parentShards().asScala.toSeq).toSet == Set(Seq(parent)))
    val shards = kinesis.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().asScala
    assert(children.map(_.shardId()).toSet == shards.filter(_.parentShardId() == parent).map(_.shardId()).toSet)
    assert(shards.find(_.shardId() == parent).get.sequenceNumberRange().endingSequenceNumber() != null)
  }

  test("splitEndAnswer: a closed shard's last records come with a next iterator, its end in the next, empty answer") {
    val stream = newStreamName()
    val Seq(parent) = createStream(stream, 1)
    val puts = Seq("a", "b").map(d => kinesis.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey("p")
      .data(SdkBytes.fromUtf8String(d)).build()).sequenceNumber())
    kinesis.splitShard(SplitShardRequest.builder().streamName(stream).shardToSplit(parent)
      .newStartingHashKey(HashKeys.uniformStart(1, 2).toString).build())

    admin.splitEndAnswer(on = true)
    val last = read(iterator(stream, parent, ShardIteratorType.TRIM_HORIZON))
    assert(last.records().asScala.map(_.sequenceNumber()) == puts)
    assert(last.nextShardIterator() != null && !last.hasChildShards && last.millisBehindLatest() == 0L)
    val end = read(last.nextShardIterator())
    assert(end.records().isEmpty && end.nextShardIterator() == null && end.childShards().size == 2)

    admin.splitEndAnswer(on = false)
    val together = read(iterator(stream, parent, ShardIteratorType.TRIM_HORIZON))
    assert(together.records().asScala.map(_.sequenceNumber()) == puts)
    assert(together.nextShardIterator() == null && together.childShards().size == 2)
  }

  test("the SDK's async client (Netty, HTTP/1.1) puts and reads over keep-alive connections") {
    val stream = newStreamName()
    val Seq(shard) = createStream(stream, 1)
    val async = KinesisAsyncClient.builder()
      .endpointOverride(server.endpoint)
      .region(Region.US_EAST_1)
      .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
      .httpClientBuilder(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP1_1))
      .build()
    try {
      val puts = (1 to 20).map(i => async.putRecord(PutRecordRequest.builder().streamName(stream).partitionKey(s"k$i")
        .data(SdkBytes.fromUtf8String(s"r$i")).build()))
      puts.foreach(_.join())
      val it = async.getShardIterator(GetShardIteratorRequest.builder().streamName(stream).shardId(shard)
        .shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).join().shardIterator()
      val records = async.getRecords(GetRecordsRequest.builder().shardIterator(it).build()).join().records().asScala
      assert(records.map(_.data().asUtf8String()).toSet == (1 to 20).map(i => s"r$i").toSet)
    } finally async.close()
  }

  /** Waits for the wall clock to move past an instant, so two records get distinct arrival times. */
  private def awaitClockPast(t: Instant): Unit = {
    val deadline = System.nanoTime() + 5_000_000_000L
    while (!Instant.now().isAfter(t.plusMillis(1))) {
      require(System.nanoTime() < deadline, "the clock did not move")
      Thread.onSpinWait()
    }
  }

  private implicit class Lone[A](xs: Iterable[A]) {
    def loneElement: A = { assert(xs.size == 1, s"expected one element, got $xs"); xs.head }
  }
}
