package io.github.sparkkinesis.simulator

import java.util.concurrent.{CompletableFuture, LinkedBlockingQueue, TimeUnit}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.http.Protocol
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * Enhanced fan-out as the AWS SDK's async client meets it over HTTP/2 with prior knowledge: the consumer's
 * lifecycle, SubscribeToShard's events (records in order, continuation, the shard's end), expiry, the
 * one-per-second rule, the 20-consumer limit and a cut subscription.
 */
class SdkFanOutSuite extends AnyFunSuite with SimulatorFixture {
  private lazy val async: KinesisAsyncClient = KinesisAsyncClient.builder()
    .endpointOverride(server.endpoint)
    .region(Region.US_EAST_1)
    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
    .httpClientBuilder(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP2))
    .build()

  override protected def afterAll(): Unit = try async.close() finally super.afterAll()

  /** A subscription's events as they come, and how it ended (the future: cleanly, or with the error). */
  private final class Subscription(val events: LinkedBlockingQueue[SubscribeToShardEvent], val done: CompletableFuture[Void]) {
    def next(seconds: Int = 10): SubscribeToShardEvent = {
      val e = events.poll(seconds, TimeUnit.SECONDS)
      assert(e != null, s"no event within $seconds s")
      e
    }
    /** Events until one holds records. */
    def nextWithRecords(): SubscribeToShardEvent = {
      var e = next()
      while (e.records().isEmpty) e = next()
      e
    }
  }

  private def subscribe(consumerArn: String, shardId: String, from: StartingPosition): Subscription = {
    val events = new LinkedBlockingQueue[SubscribeToShardEvent]()
    val handler = SubscribeToShardResponseHandler.builder()
      .subscriber((e: SubscribeToShardEventStream) => e match {
        case event: SubscribeToShardEvent => events.add(event); ()
        case _ => ()
      }).build()
    new Subscription(events, async.subscribeToShard(SubscribeToShardRequest.builder().consumerARN(consumerArn)
      .shardId(shardId).startingPosition(from).build(), handler))
  }

  private def streamArn(stream: String): String =
    kinesis.describeStreamSummary((b: DescribeStreamSummaryRequest.Builder) => b.streamName(stream)).streamDescriptionSummary().streamARN()

  private def activeConsumer(stream: String, name: String): String = {
    val arn = kinesis.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn(stream)).consumerName(name)).consumer().consumerARN()
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
    def status = kinesis.describeStreamConsumer((b: DescribeStreamConsumerRequest.Builder) => b.consumerARN(arn))
      .consumerDescription().consumerStatus()
    while (status != ConsumerStatus.ACTIVE) assert(System.nanoTime() < deadline, "consumer not ACTIVE within 10 s")
    arn
  }

  private def consumersOf(stream: String): Seq[String] = kinesis.listStreamConsumers((b: ListStreamConsumersRequest.Builder) =>
    b.streamARN(streamArn(stream))).consumers().asScala.map(_.consumerName()).toSeq

  private def put(stream: String, key: String, data: String): PutRecordResponse =
    kinesis.putRecord((b: PutRecordRequest.Builder) => b.streamName(stream).partitionKey(key).data(SdkBytes.fromUtf8String(data)))

  private def from(kind: ShardIteratorType, seq: String = null): StartingPosition =
    StartingPosition.builder().`type`(kind).sequenceNumber(seq).build()

  test("register, describe, list, deregister: CREATING, then ACTIVE, then DELETING, then gone") {
    admin.settings("""{"consumerActivationMillis": 300}""")
    val stream = newStreamName("consumers")
    createStream(stream, 1)
    val registered = kinesis.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn(stream)).consumerName("app")).consumer()
    assert(registered.consumerStatus() == ConsumerStatus.CREATING)
    assert(registered.consumerARN().startsWith(s"${streamArn(stream)}/consumer/app:"))
    val again = intercept[ResourceInUseException](kinesis.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn(stream)).consumerName("app")))
    assert(again.getMessage.contains("already exists"))
    assert(activeConsumer(stream, "other").nonEmpty)
    val described = kinesis.describeStreamConsumer((b: DescribeStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn(stream)).consumerName("app")).consumerDescription()
    assert(described.consumerStatus() == ConsumerStatus.ACTIVE && described.streamARN() == streamArn(stream))
    val listed = kinesis.listStreamConsumersPaginator((b: ListStreamConsumersRequest.Builder) =>
      b.streamARN(streamArn(stream)).maxResults(1)).asScala.flatMap(_.consumers().asScala).map(_.consumerName()).toSeq
    assert(listed == Seq("app", "other"), "two pages of one")
    kinesis.deregisterStreamConsumer((b: DeregisterStreamConsumerRequest.Builder) => b.consumerARN(registered.consumerARN()))
    assert(kinesis.describeStreamConsumer((b: DescribeStreamConsumerRequest.Builder) => b.consumerARN(registered.consumerARN()))
      .consumerDescription().consumerStatus() == ConsumerStatus.DELETING)
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
    def names = kinesis.listStreamConsumers((b: ListStreamConsumersRequest.Builder) => b.streamARN(streamArn(stream)))
      .consumers().asScala.map(_.consumerName())
    while (names.contains("app")) assert(System.nanoTime() < deadline, "consumer not gone within 10 s")
    intercept[ResourceNotFoundException](kinesis.describeStreamConsumer((b: DescribeStreamConsumerRequest.Builder) =>
      b.consumerARN(registered.consumerARN())))
  }

  test("records put after subscribing are pushed in order; a renewal from the continuation loses and repeats nothing") {
    admin.settings("""{"consumerActivationMillis": 0, "subscriptionDurationMillis": 1500, "subscriptionHeartbeatMillis": 200}""")
    val stream = newStreamName("push")
    val Seq(shard) = createStream(stream, 1)
    val consumer = activeConsumer(stream, "pusher")
    val first = subscribe(consumer, shard, from(ShardIteratorType.LATEST))
    assert(first.next().records().isEmpty, "a quiet shard's first event is empty")
    val put1 = (1 to 5).map(i => put(stream, "k", s"a$i").sequenceNumber())
    var got = Seq.empty[String]
    var continuation = ""
    while (got.size < 5) { val e = first.next(); got ++= e.records().asScala.map(_.sequenceNumber()); continuation = e.continuationSequenceNumber() }
    assert(got == put1)
    first.done.get(10, TimeUnit.SECONDS) // ends cleanly after its 1.5 s
    assert(admin.shardCounter(stream, shard, "expiredSubscriptions") == 1)
    val put2 = (1 to 5).map(i => put(stream, "k", s"b$i").sequenceNumber())
    val second = subscribe(consumer, shard, from(ShardIteratorType.AFTER_SEQUENCE_NUMBER, continuation))
    var got2 = Seq.empty[String]
    while (got2.size < 5) got2 ++= second.next().records().asScala.map(_.sequenceNumber())
    assert(got2 == put2)
  }

  test("the last event of a closed shard names its children and has no continuation; the subscription ends") {
    admin.settings("""{"consumerActivationMillis": 0, "subscriptionHeartbeatMillis": 200}""")
    val stream = newStreamName("closed")
    val Seq(shard) = createStream(stream, 1)
    val consumer = activeConsumer(stream, "reader")
    val before = put(stream, "k", "before").sequenceNumber()
    val range = kinesis.listShards((b: ListShardsRequest.Builder) => b.streamName(stream)).shards().get(0).hashKeyRange()
    kinesis.splitShard((b: SplitShardRequest.Builder) => b.streamName(stream).shardToSplit(shard)
      .newStartingHashKey(((BigInt(range.startingHashKey()) + BigInt(range.endingHashKey())) / 2).toString))
    val sub = subscribe(consumer, shard, from(ShardIteratorType.TRIM_HORIZON))
    var e = sub.next()
    var seen = e.records().asScala.map(_.sequenceNumber()).toSeq
    while (e.childShards().isEmpty) { e = sub.next(); seen ++= e.records().asScala.map(_.sequenceNumber()) }
    assert(seen == Seq(before))
    assert(e.continuationSequenceNumber() == null && e.childShards().size == 2)
    assert(e.childShards().asScala.forall(_.parentShards().asScala == Seq(shard)))
    sub.done.get(10, TimeUnit.SECONDS)
  }

  test("splitEndAnswer: the event with a closed shard's last records has a continuation; the next, empty, the end") {
    admin.settings("""{"consumerActivationMillis": 0, "subscriptionHeartbeatMillis": 200, "splitEndAnswer": true}""")
    val stream = newStreamName("split-end")
    val Seq(shard) = createStream(stream, 1)
    val consumer = activeConsumer(stream, "reader")
    val before = put(stream, "k", "before").sequenceNumber()
    kinesis.splitShard((b: SplitShardRequest.Builder) => b.streamName(stream).shardToSplit(shard)
      .newStartingHashKey(HashKeys.uniformStart(1, 2).toString))

    val split = subscribe(consumer, shard, from(ShardIteratorType.TRIM_HORIZON))
    val last = split.nextWithRecords()
    assert(last.records().asScala.map(_.sequenceNumber()) == Seq(before))
    assert(last.continuationSequenceNumber() == before && !last.hasChildShards)
    val end = split.next()
    assert(end.records().isEmpty && end.continuationSequenceNumber() == null && end.childShards().size == 2)
    split.done.get(10, TimeUnit.SECONDS)

    admin.splitEndAnswer(on = false)
    val together = subscribe(consumer, shard, from(ShardIteratorType.TRIM_HORIZON)).nextWithRecords()
    assert(together.continuationSequenceNumber() == null && together.childShards().size == 2)
  }

  test("a clock offset moved back leaves an ACTIVE consumer ACTIVE and its earlier subscription no reason to refuse") {
    admin.settings("""{"consumerActivationMillis": 0, "quotas": {"enabled": true}, "clockOffsetMs": 5000}""")
    val stream = newStreamName("clock")
    val Seq(shard) = createStream(stream, 1)
    val consumer = activeConsumer(stream, "skewed")
    subscribe(consumer, shard, from(ShardIteratorType.LATEST)).next()
    admin.clockOffset(-5000)
    assert(kinesis.describeStreamConsumer((b: DescribeStreamConsumerRequest.Builder) => b.consumerARN(consumer))
      .consumerDescription().consumerStatus() == ConsumerStatus.ACTIVE)
    subscribe(consumer, shard, from(ShardIteratorType.LATEST)).next()
  }

  test("with quotas on: a second subscribe within a second is refused, and a 21st consumer") {
    admin.settings("""{"consumerActivationMillis": 0, "quotas": {"enabled": true}}""")
    val stream = newStreamName("limits")
    val Seq(shard) = createStream(stream, 1)
    val consumer = activeConsumer(stream, "c0")
    subscribe(consumer, shard, from(ShardIteratorType.LATEST)).next()
    val refused = intercept[java.util.concurrent.ExecutionException](
      subscribe(consumer, shard, from(ShardIteratorType.LATEST)).done.get(10, TimeUnit.SECONDS))
    assert(refused.getCause.isInstanceOf[LimitExceededException], refused.getCause)
    def register(name: String) = kinesis.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn(stream)).consumerName(name))
    // Registering has a rate of its own (5 a second): quick registrations meet it first.
    val rated = intercept[LimitExceededException]((1 to 6).foreach(i => register(s"c$i")))
    assert(rated.getMessage.contains("Rate exceeded for RegisterStreamConsumer"))
    admin.quotas(enabled = false)
    (1 to 19).filterNot(i => consumersOf(stream).contains(s"c$i")).foreach(i => register(s"c$i"))
    admin.quotas(enabled = true)
    val full = intercept[LimitExceededException](register("c20"))
    assert(full.getMessage.contains("Limit of 20 consumers per stream exceeded"))
  }

  test("consumersPerStream: 50, as On-demand Advantage streams allow, lets a 21st consumer register and refuses a 51st") {
    admin.settings("""{"consumerActivationMillis": 0, "quotas": {"enabled": false, "consumersPerStream": 50}}""")
    assert(admin.settings("{}").get("quotas").get("consumersPerStream").asInt() == 50)
    val stream = newStreamName("advantage")
    createStream(stream, 1)
    def register(name: String) = kinesis.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn(stream)).consumerName(name))
    (1 to 20).foreach(i => register(s"c$i"))
    admin.quotas(enabled = true)
    assert(register("c21").consumer().consumerName() == "c21")
    admin.quotas(enabled = false)
    (22 to 50).foreach(i => register(s"c$i"))
    admin.quotas(enabled = true)
    val full = intercept[LimitExceededException](register("c51"))
    assert(full.getMessage.contains("Limit of 50 consumers per stream exceeded"))
    assert(consumersOf(stream).size == 50)
    val bad = intercept[Exception](admin.settings("""{"quotas": {"consumersPerStream": 2.5}}"""))
    assert(bad.getMessage.contains("consumersPerStream is a whole number"), bad.getMessage)
  }

  test("faults: a cut subscription fails on the client, an exception event names its type") {
    admin.settings("""{"consumerActivationMillis": 0, "subscriptionHeartbeatMillis": 200}""")
    val stream = newStreamName("cut")
    val Seq(shard) = createStream(stream, 1)
    val consumer = activeConsumer(stream, "cut")
    admin.faults("""[{"kind": "cutSubscription", "operations": ["SubscribeToShard"], "afterEvents": 2, "maxCount": 1}]""")
    val cut = subscribe(consumer, shard, from(ShardIteratorType.LATEST))
    intercept[java.util.concurrent.ExecutionException](cut.done.get(10, TimeUnit.SECONDS))
    assert(cut.events.size == 2)
    admin.faults("""[{"kind": "subscriptionError", "operations": ["SubscribeToShard"], "exceptionType": "ResourceInUseException", "maxCount": 1}]""")
    val failed = intercept[java.util.concurrent.ExecutionException](
      subscribe(consumer, shard, from(ShardIteratorType.LATEST)).done.get(10, TimeUnit.SECONDS))
    assert(failed.getCause.isInstanceOf[ResourceInUseException], failed.getCause)
    assert(admin.shardCounter(stream, shard, "cutSubscriptions") == 2)
  }

  test("ordinary operations over HTTP/2 with prior knowledge, on the port that serves HTTP/1.1") {
    val stream = newStreamName("h2")
    val Seq(shard) = createStream(stream, 1)
    val seq = async.putRecord((b: PutRecordRequest.Builder) => b.streamName(stream).partitionKey("k")
      .data(SdkBytes.fromUtf8String("v"))).get(10, TimeUnit.SECONDS).sequenceNumber()
    val it = async.getShardIterator((b: GetShardIteratorRequest.Builder) => b.streamName(stream).shardId(shard)
      .shardIteratorType(ShardIteratorType.TRIM_HORIZON)).get(10, TimeUnit.SECONDS).shardIterator()
    val records = async.getRecords((b: GetRecordsRequest.Builder) => b.shardIterator(it)).get(10, TimeUnit.SECONDS).records()
    assert(records.asScala.map(_.sequenceNumber()) == Seq(seq))
    assert(kinesis.getRecords((b: GetRecordsRequest.Builder) => b.shardIterator(it)).records().size == 1, "and over HTTP/1.1")
  }
}
