package io.github.sparkkinesis.it

import java.time.{Duration, Instant}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model._

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
      assert(metric(query, "fanOutEvents") > 0 && metric(query, "subscriptions") >= 2)
    } finally query.stop()
  }
}
