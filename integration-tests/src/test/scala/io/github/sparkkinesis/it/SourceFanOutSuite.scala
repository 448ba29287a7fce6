package io.github.sparkkinesis.it

import java.time.{Duration, Instant}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model._
import io.github.sparkkinesis.source.driver.FetchPlanner

/**
 * `consumerMode=efo` against the simulator speaking SubscribeToShard over HTTP/2: the consumer's lifecycle, every
 * record exactly once in shard order through renewals, cuts, reshards and restarts, and no GetRecords at all.
 */
class SourceFanOutSuite extends AnyFunSuite with SimulatorSourceTest {

  private def keyed(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 7}", f"$prefix-$i%03d"))

  private def efo(stream: String, options: (String, String)*) =
    kinesisReader(stream, Seq("consumerMode" -> "efo", "initialPosition" -> "trim_horizon") ++ options: _*)

  private def reading(stream: String, checkpoint: String, options: (String, String)*): (Collector, StreamingQuery) = {
    val collector = new Collector
    (collector, collector.start(efo(stream, options: _*), checkpoint, Trigger.ProcessingTime(100)))
  }

  private def consumers(stream: String): Seq[Consumer] = {
    val arn = kinesis.control.describeStreamSummary((b: DescribeStreamSummaryRequest.Builder) => b.streamName(stream))
      .streamDescriptionSummary().streamARN()
    kinesis.control.listStreamConsumers((b: ListStreamConsumersRequest.Builder) => b.streamARN(arn)).consumers().asScala.toSeq
  }

  private def getRecordsCalls(): Long = simulator.admin.operationCounter("GetRecords", "calls")

  private def metric(query: StreamingQuery, name: String): Long =
    query.recentProgress.toSeq.flatMap(_.sources.headOption).flatMap(_.metrics.asScala.get(name)).map(_.toLong).sum

  test("records are pushed, not polled: every record once in shard order, through a consumer named after the query") {
    val stream = newStreamName("efo")
    kinesis.createStream(stream, 2)
    val before = kinesis.putAll(stream, keyed("before", 30))
    val polls = getRecordsCalls()
    val (collector, query) = reading(stream, newCheckpoint())
    try {
      eventually("the records put before the start") { collector.records.size >= before.size }
      val after = kinesis.putAll(stream, keyed("after", 30))
      eventually("the records put while it runs") { collector.records.size >= before.size + after.size }
      query.processAllAvailable()
      assertExactly(collector.records, before ++ after)
      assertKeyOrder(collector.records, before ++ after)
      assert(getRecordsCalls() == polls, "an enhanced fan-out query called GetRecords")
      assert(consumers(stream).map(_.consumerName()) == Seq(s"spark-kinesis_${query.id}"))
      eventually("the consumer counted in the metrics") {
        query.lastProgress != null && query.lastProgress.sources.head.metrics.get("numRegisteredConsumers") == "1"
      }
      val reported = query.lastProgress.sources.head.metrics.asScala
      assert(reported("mode") == "efo" && reported("numStreams") == "1", "Databricks' mode and numStreams")
      assert(metric(query, "fanOutEvents") > 0 && metric(query, "subscriptions") >= 2)
    } finally query.stop()
  }

  test("latest on an idle stream picks up the first record put after the start; quiet shards never stall") {
    val stream = newStreamName("efo-latest")
    kinesis.createStream(stream, 2)
    val old = kinesis.putAll(stream, keyed("old", 10))
    // `latest` reaches back a little before the start (FetchPlanner.LatestLookBackMillis): begin after that.
    val lastOldArrival = System.currentTimeMillis()
    eventually("the old records to be older than latest reaches back") {
      System.currentTimeMillis() > lastOldArrival + FetchPlanner.LatestLookBackMillis
    }
    val subscribed = simulator.admin.operationCounter("SubscribeToShard", "calls")
    val (collector, query) = reading(stream, newCheckpoint(), "initialPosition" -> "latest")
    try {
      // Quiet shards: the first record comes after both subscriptions are open and have sent their first events.
      eventually("both shards subscribed") { simulator.admin.operationCounter("SubscribeToShard", "calls") >= subscribed + 2 }
      val first = kinesis.putAll(stream, Seq("key-1" -> "first"))
      eventually("the first record after the start") { collector.records.nonEmpty }
      val more = kinesis.putAll(stream, keyed("more", 20))
      eventually("the rest") { collector.records.size >= 21 }
      query.processAllAvailable()
      assertExactly(collector.records, first ++ more)
      assert(!collector.records.exists(r => old.exists(_.sequenceNumber == r.sequenceNumber)))
    } finally query.stop()
  }

  test("at_timestamp and per-shard sequence numbers start where polling would") {
    val stream = newStreamName("efo-start")
    kinesis.createStream(stream, 1)
    val before = kinesis.putAll(stream, keyed("before", 10))
    // The clock moves on between the two groups, so a timestamp can start at the second (same machine's clock).
    val lastBeforeMillis = System.currentTimeMillis()
    eventually("the clock to pass the first group") { System.currentTimeMillis() > lastBeforeMillis + 2 }
    val after = kinesis.putAll(stream, keyed("after", 10))
    val shard = after.head.shardId
    val perShard = s"""{"$shard":{"after_sequence_number":"${before.last.sequenceNumber}"}}"""
    assertExactly(readAvailableNow(efo(stream, "initialPosition" -> perShard)).records, after)
    val atSeq = s"""{"$shard":{"at_sequence_number":"${before(4).sequenceNumber}"}}"""
    assertExactly(readAvailableNow(efo(stream, "initialPosition" -> atSeq)).records, before.drop(4) ++ after)
    val firstAfter = kinesis.client.getRecords((b: GetRecordsRequest.Builder) => b.shardIterator(
      kinesis.client.getShardIterator((g: GetShardIteratorRequest.Builder) => g.streamName(stream).shardId(shard)
        .shardIteratorType(ShardIteratorType.AT_SEQUENCE_NUMBER).startingSequenceNumber(after.head.sequenceNumber))
        .shardIterator()).limit(1)).records().get(0).approximateArrivalTimestamp()
    assertExactly(readAvailableNow(efo(stream, "initialPosition" -> "at_timestamp",
      "initialTimestamp" -> firstAfter.toEpochMilli.toString)).records, after)
  }

  test("a split and a merge while reading: parents before children, each key in order") {
    val stream = newStreamName("efo-reshard")
    kinesis.createStream(stream, 2)
    val Seq(a, b) = kinesis.shardIds(stream).sorted
    val (collector, query) = reading(stream, newCheckpoint())
    try {
      val first = kinesis.putAll(stream, keyed("first", 30))
      eventually("the records before the merge") { collector.records.size >= first.size }
      kinesis.merge(stream, a, b)
      val merged = kinesis.putAll(stream, keyed("merged", 30))
      eventually("the records after the merge") { collector.records.size >= first.size + merged.size }
      val child = merged.head.shardId
      kinesis.split(stream, child)
      val split = kinesis.putAll(stream, keyed("split", 30))
      eventually("the records after the split") { collector.records.size >= first.size + merged.size + split.size }
      query.processAllAvailable()
      val read = collector.records
      val all = first ++ merged ++ split
      assertExactly(read, all)
      assertKeyOrder(read, all)
      def lastBatch(shards: Set[String]) = read.filter(r => shards(r.shardId)).map(_.batchId).max
      assert(read.filter(_.shardId == child).forall(_.batchId > lastBatch(Set(a, b))), "the merged child was read before its parents ended")
      assert(read.filter(r => !Set(a, b, child)(r.shardId)).forall(_.batchId > lastBatch(Set(child))), "a split child before its parent ended")
    } finally query.stop()
  }

  test("subscriptions cut mid-stream and renewed after they expire: nothing lost or repeated, counted in the metrics") {
    val stream = newStreamName("efo-renew")
    kinesis.createStream(stream, 2)
    simulator.admin.settings("""{"subscriptionDurationMillis": 1500}""")
    val (collector, query) = reading(stream, newCheckpoint())
    try {
      simulator.admin.faults("""[{"kind": "cutSubscription", "operations": ["SubscribeToShard"], "probability": 0.5, "maxCount": 3}]""")
      var put = Seq.empty[PutRecordResult]
      for (round <- 1 to 6) {
        put ++= kinesis.putAll(stream, keyed(s"r$round", 15))
        eventually(s"round $round to be read") { collector.records.size >= put.size }
      }
      eventually("a renewal after expiry and a cut, in the metrics", Duration.ofSeconds(45)) {
        metric(query, "subscriptionRenewals") > 0 && metric(query, "eventStreamErrors") > 0
      }
      query.processAllAvailable()
      assert(query.exception.isEmpty)
      assertExactly(collector.records, put)
      assertKeyOrder(collector.records, put)
    } finally {
      query.stop()
      simulator.admin.clearFaults()
      simulator.admin.settings("""{"subscriptionDurationMillis": 300000}""")
    }
  }

  test("a restart reuses the query's consumer and goes on exactly where it stopped; a replayed batch is the same") {
    val stream = newStreamName("efo-restart")
    kinesis.createStream(stream, 2)
    val checkpoint = newCheckpoint()
    val first = kinesis.putAll(stream, keyed("first", 20))
    val run1 = readAvailableNow(efo(stream, "maxRecordsPerTrigger" -> "7"), checkpoint)
    assertExactly(run1.records, first)
    val consumer = consumers(stream)
    assert(consumer.size == 1)
    // Forget the last commit, as a driver dying before it leaves the checkpoint: the batch is replayed.
    val last = run1.batchIds.max
    java.nio.file.Files.delete(java.nio.file.Paths.get(checkpoint, "commits", last.toString))
    java.nio.file.Files.deleteIfExists(java.nio.file.Paths.get(checkpoint, "commits", s".$last.crc"))
    val second = kinesis.putAll(stream, keyed("second", 20))
    val run2 = readAvailableNow(efo(stream, "maxRecordsPerTrigger" -> "7"), checkpoint)
    assert(run2.records.filter(_.batchId == last) == run1.records.filter(_.batchId == last), "the replayed batch differs")
    assertExactly(run1.records.filter(_.batchId < last) ++ run2.records, first ++ second)
    assert(consumers(stream).map(_.consumerARN()) == consumer.map(_.consumerARN()), "the restart registered another consumer")
  }

  test("requireConsumerDeregistration: true deregisters on stop, false (the default) keeps the consumer") {
    val stream = newStreamName("efo-dereg")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, keyed("x", 5))
    readAvailableNow(efo(stream, "consumerName" -> "kept"))
    assertExactly(readAvailableNow(efo(stream, "consumerName" -> "dropped", "requireConsumerDeregistration" -> "true")).records, put)
    eventually("the consumer to be deregistered") { consumers(stream).map(_.consumerName()) == Seq("kept") }
  }

  test("registerConsumerTimeoutInterval bounds the wait for ACTIVE; deregisterConsumerTimeoutInterval, the wait for the consumer to go") {
    val stream = newStreamName("efo-timeouts")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, keyed("t", 5))
    simulator.admin.settings("""{"consumerActivationMillis": 4000}""")
    try {
      val query = new Collector().start(efo(stream, "consumerName" -> "slow", "registerConsumerTimeoutInterval" -> "1s"),
        newCheckpoint(), Trigger.ProcessingTime(100))
      val error = try { scala.util.Try(query.awaitTermination(Duration.ofSeconds(60).toMillis)); query.exception } finally query.stop()
      assert(error.exists(_.getMessage.contains("(registerConsumerTimeoutInterval) for enhanced fan-out consumer")), s"got $error")
      simulator.admin.settings("""{"consumerActivationMillis": 1500}""")
      eventually("the slow consumer to be ACTIVE") { consumers(stream).forall(_.consumerStatus() == ConsumerStatus.ACTIVE) }
      // The stop waits for the deregistered consumer to be gone (1.5 s DELETING here), so none is left when it returns.
      val read = readAvailableNow(efo(stream, "consumerName" -> "waited", "requireConsumerDeregistration" -> "true"))
      assertExactly(read.records, put)
      assert(consumers(stream).map(_.consumerName()) == Seq("slow"))
    } finally simulator.admin.settings("""{"consumerActivationMillis": 500}""")
  }

  test("two queries with their own consumers on one stream each read everything") {
    val stream = newStreamName("efo-two")
    kinesis.createStream(stream, 2)
    val (c1, q1) = reading(stream, newCheckpoint(), "consumerName" -> "one")
    val (c2, q2) = reading(stream, newCheckpoint(), "consumerName" -> "two")
    try {
      val put = kinesis.putAll(stream, keyed("both", 40))
      eventually("both queries to read everything") { c1.records.size >= put.size && c2.records.size >= put.size }
      q1.processAllAvailable(); q2.processAllAvailable()
      assertExactly(c1.records, put)
      assertExactly(c2.records, put)
      assert(consumers(stream).map(_.consumerName()).sorted == Seq("one", "two"))
    } finally { q1.stop(); q2.stop() }
  }

  test("a consumer registered beforehand is used by ARN and never deregistered") {
    val stream = newStreamName("efo-given")
    kinesis.createStream(stream, 1)
    val streamArn = kinesis.control.describeStreamSummary((b: DescribeStreamSummaryRequest.Builder) => b.streamName(stream))
      .streamDescriptionSummary().streamARN()
    val arn = kinesis.control.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn).consumerName("ops-owned")).consumer().consumerARN()
    val put = kinesis.putAll(stream, keyed("g", 10))
    val read = readAvailableNow(efo(stream, "registeredConsumerId" -> arn, "requireConsumerDeregistration" -> "true"))
    assertExactly(read.records, put)
    assert(consumers(stream).map(_.consumerARN()) == Seq(arn))
  }

  test("registeredConsumerIdType=name: a consumer registered beforehand is found by name; a missing one fails at start") {
    val stream = newStreamName("efo-named")
    kinesis.createStream(stream, 1)
    val streamArn = kinesis.control.describeStreamSummary((b: DescribeStreamSummaryRequest.Builder) => b.streamName(stream))
      .streamDescriptionSummary().streamARN()
    val arn = kinesis.control.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn).consumerName("ops-named")).consumer().consumerARN()
    val put = kinesis.putAll(stream, keyed("n", 10))
    val byName = Seq("registeredConsumerIdType" -> "name", "requireConsumerDeregistration" -> "true")
    val read = readAvailableNow(efo(stream, byName :+ ("registeredConsumerId" -> "ops-named"): _*))
    assertExactly(read.records, put)
    assert(consumers(stream).map(_.consumerARN()) == Seq(arn)) // found, not registered, and not deregistered
    val query = new Collector().start(efo(stream, byName :+ ("registeredConsumerId" -> "nobody"): _*), newCheckpoint(),
      Trigger.ProcessingTime(100))
    val error = try { scala.util.Try(query.awaitTermination(Duration.ofSeconds(60).toMillis)); query.exception } finally query.stop()
    assert(error.exists(_.getMessage.contains(s"enhanced fan-out consumer 'nobody', which is not registered on stream $stream")),
      s"got $error")
    assert(consumers(stream).map(_.consumerName()) == Seq("ops-named"))
  }

  private def registerConsumers(stream: String, names: Seq[String]): Unit = {
    val streamArn = kinesis.control.describeStreamSummary((b: DescribeStreamSummaryRequest.Builder) => b.streamName(stream))
      .streamDescriptionSummary().streamARN()
    names.foreach(name => kinesis.control.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
      b.streamARN(streamArn).consumerName(name)))
  }

  test("a stream with as many consumers as Kinesis allows: the query fails at start naming them and the way out") {
    val stream = newStreamName("efo-full")
    kinesis.createStream(stream, 1)
    registerConsumers(stream, (1 to 20).map(i => s"c$i"))
    val query = new Collector().start(efo(stream), newCheckpoint(), Trigger.ProcessingTime(100))
    // awaitTermination rethrows the query's failure, which query.exception keeps.
    val error = try { scala.util.Try(query.awaitTermination(Duration.ofSeconds(60).toMillis)); query.exception } finally query.stop()
    val message = error.map(_.getMessage).getOrElse("")
    assert(message.contains(s"Stream $stream has 20 enhanced fan-out consumers, as many as Kinesis allows"), s"got $error")
    assert(message.contains("Limit of 20 consumers per stream exceeded"), "Kinesis' own words are in the message")
    assert(message.contains("c1, c10, c11") && message.contains("consumerMode=polling"))
    assert(consumers(stream).size == 20)
  }

  test("a stream that allows 50 consumers (On-demand Advantage): with 21, registrations refused for their rate are waited out") {
    val stream = newStreamName("efo-advantage")
    kinesis.createStream(stream, 1)
    simulator.admin.settings("""{"quotas": {"consumersPerStream": 50}}""")
    try {
      registerConsumers(stream, (1 to 20).map(i => s"c$i"))
      val put = kinesis.putAll(stream, keyed("a", 10))
      // RegisterStreamConsumer at 0.5 a second: c21 takes the one call there is, the query's is refused for a while
      // with the LimitExceededException a full stream would get.
      simulator.admin.settings("""{"quotas": {"factor": 0.1}}""")
      registerConsumers(stream, Seq("c21"))
      val throttled = simulator.admin.operationCounter("RegisterStreamConsumer", "throttled")
      assertExactly(readAvailableNow(efo(stream, "consumerName" -> "c22")).records, put)
      assert(simulator.admin.operationCounter("RegisterStreamConsumer", "throttled") > throttled, "no refusal to wait out")
      assert(consumers(stream).size == 22 && consumers(stream).exists(_.consumerName() == "c22"))
    } finally simulator.admin.settings("""{"quotas": {"factor": 1.0, "consumersPerStream": 20}}""")
  }

  test("a consumer Databricks registered (databricks_<name>) is read through with consumerName=databricks_<name>") {
    val stream = newStreamName("efo-databricks")
    kinesis.createStream(stream, 1)
    registerConsumers(stream, Seq("databricks_orders"))
    val put = kinesis.putAll(stream, keyed("d", 10))
    val log = LogCapture.install()
    try {
      assertExactly(readAvailableNow(efo(stream, "consumerName" -> "databricks_orders")).records, put)
      assert(consumers(stream).map(_.consumerName()) == Seq("databricks_orders"), "a second consumer was registered")
      assert(!log.text.contains("the one Databricks' connector registers"))
      // The Databricks job's own option: a consumer of its own, and a WARN naming the one to reuse.
      assertExactly(readAvailableNow(efo(stream, "consumerName" -> "orders")).records, put)
      assert(consumers(stream).map(_.consumerName()).sorted == Seq("databricks_orders", "orders"))
      assert(log.text.contains(s"Stream $stream has enhanced fan-out consumer 'databricks_orders', the one Databricks' " +
        "connector registers for consumerName=orders"), log.text.takeRight(3000))
      assert(log.text.contains("set consumerName=databricks_orders"))
    } finally log.uninstall()
  }

  test("quiet shards on a small buffer: every subscription keeps asking, so each shard's next record comes at once") {
    val stream = newStreamName("efo-quiet")
    kinesis.createStream(stream, 8)
    // No heartbeats within the test: a shard whose ask waits for buffer room would see nothing for a minute.
    simulator.admin.settings("""{"subscriptionHeartbeatMillis": 60000}""")
    val subscribed = simulator.admin.operationCounter("SubscribeToShard", "calls")
    val (collector, query) = reading(stream, newCheckpoint(), "initialPosition" -> "latest", "fetchBufferSize" -> "1m")
    try {
      eventually("all eight shards subscribed", Duration.ofSeconds(30)) {
        simulator.admin.operationCounter("SubscribeToShard", "calls") >= subscribed + 8
      }
      // Records on one shard at a time while seven stay quiet: the busy one must not wait behind their asks.
      val first = kinesis.putAll(stream, (1 to 5).map(i => ("key-a", s"a-$i")))
      eventually("the first shard's records", Duration.ofSeconds(30)) { collector.records.size >= first.size }
      val other = (1 to 100).map(i => s"key-$i").find(k => kinesis.putAll(stream, Seq(k -> "probe")).head.shardId != first.head.shardId)
      val second = kinesis.putAll(stream, (1 to 5).map(i => (other.get, s"b-$i")))
      eventually("another shard's records", Duration.ofSeconds(30)) { collector.records.size >= first.size + second.size + 1 }
      query.processAllAvailable()
      assert(collector.records.count(_.data.startsWith("a-")) == 5 && collector.records.count(_.data.startsWith("b-")) == 5)
    } finally {
      query.stop()
      simulator.admin.settings("""{"subscriptionHeartbeatMillis": 5000}""")
    }
  }
}
