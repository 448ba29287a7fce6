package io.github.sparkkinesis.it

import java.time.Duration

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The source against the simulator with AWS's quotas on: it stays within 5 GetRecords calls per second per shard
 * as the server counts them, and throttling storms, 5xx and connection resets, and expired iterators in the middle
 * of a query neither fail it nor lose or repeat a record.
 */
class SourceQuotaAndFaultSuite extends AnyFunSuite with SimulatorSourceTest {

  private def running(stream: String): (Collector, StreamingQuery) = {
    val collector = new Collector
    (collector, collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), newCheckpoint(),
      Trigger.ProcessingTime(0)))
  }

  private def records(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 11}", s"$prefix-$i"))

  /**
   * Runs `during` while the query reads, then checks every record put was read exactly once, without failure,
   * then `calls` on the source's call metrics summed over the query's progress reports, waiting for it: calls
   * that end while the stream is idle are reported by the next snapshot (within 10 s) and its progress report.
   */
  private def survives(name: String, calls: Map[String, Long] => Boolean = _ => true)(
      during: (String, Collector) => Seq[PutRecordResult]): Unit = {
    val stream = newStreamName(name)
    kinesis.createStream(stream, 2)
    val (collector, query) = running(stream)
    try {
      val first = kinesis.putAll(stream, records("before", 40))
      eventually("the first records to be read") { collector.records.size >= first.size }
      val more = during(stream, collector)
      simulator.admin.clearFaults()
      simulator.admin.quotas(enabled = true, factor = 1.0)
      eventually("every record to be read", Duration.ofSeconds(90)) { collector.records.size >= first.size + more.size }
      query.processAllAvailable()
      assert(query.exception.isEmpty && query.isActive, s"the query failed: ${query.exception}")
      assertExactly(collector.records, first ++ more)
      def summed() = {
        val metrics = query.recentProgress.toSeq.flatMap(_.sources.headOption).map(_.metrics.asScala)
        Seq("kinesisCalls", "retries", "throttledCalls", "numAwsRateLimitErrors", "serverErrors")
          .map(k => k -> metrics.flatMap(_.get(k)).map(_.toLong).sum).toMap
      }
      var last = Map.empty[String, Long]
      try eventually("the call metrics", Duration.ofSeconds(45)) { last = summed(); calls(last) }
      catch { case e: Throwable => fail(s"call metrics summed over the progress reports: $last", e) }
    } finally query.stop()
  }

  test("at most 5 GetRecords calls per second per shard, and never throttled, as the server counts them") {
    val stream = newStreamName("quota")
    kinesis.createStream(stream, 2)
    kinesis.putAll(stream, records("q", 100))
    simulator.admin.resetCounters()
    val started = System.nanoTime()
    val (collector, query) = running(stream)
    try {
      eventually("the records to be read") { collector.records.size >= 100 }
      kinesis.putAll(stream, records("q2", 60))
      eventually("the second wave to be read") { collector.records.size >= 160 }
      // Keep polling an idle stream for a while too: idle shards are polled, and must stay within quota as well.
      val idleFrom = simulator.admin.operationCounter("GetRecords", "calls")
      eventually("a few idle polls") { simulator.admin.operationCounter("GetRecords", "calls") >= idleFrom + 6 }
    } finally query.stop()
    val seconds = (System.nanoTime() - started) / 1e9
    for (shard <- kinesis.shardIds(stream)) {
      val calls = simulator.admin.shardCounter(stream, shard, "getRecordsCalls")
      assert(calls > 0)
      assert(calls <= 5 * seconds + 1, f"$shard: $calls GetRecords calls in $seconds%.1f s")
      assert(simulator.admin.shardCounter(stream, shard, "throttledGetRecordsCalls") == 0, s"$shard was throttled")
    }
  }

  test("a backlog above the byte quota is read at 2 MiB/s per shard: a large read is waited out, no call throttled") {
    val stream = newStreamName("bytes")
    kinesis.createStream(stream, 1)
    val payload = "x" * 4000
    simulator.admin.quotas(enabled = false) // the test's own puts: 6 MB at once
    val first = try kinesis.putAll(stream, (1 to 1500).map(i => (s"key-${i % 7}", s"big-$i-$payload")))
      finally simulator.admin.quotas(enabled = true, factor = 1.0)
    val shard = kinesis.shardIds(stream).head
    val (collector, query) = running(stream)
    try {
      eventually("the backlog to be read") { collector.records.size >= first.size }
      // The backlog came in one or two calls; the calls after them fall in the debt they left.
      val after = simulator.admin.shardCounter(stream, shard, "getRecordsCalls")
      eventually("polls after the large read") { simulator.admin.shardCounter(stream, shard, "getRecordsCalls") >= after + 3 }
    } finally query.stop()
    assert(simulator.admin.shardCounter(stream, shard, "getRecordsBytes") >= 1500L * 4000, "the backlog was not read")
    assert(simulator.admin.shardCounter(stream, shard, "throttledGetRecordsCalls") == 0, "a call fell in the read debt")
    assert(collector.records.size == first.size)
  }

  test("a throttling storm mid-query is absorbed by backoff and shows in the metrics") {
    // Throttled attempts are retried, so every one is a retry too; the storm brings no 5xx.
    survives("throttle", c => c("throttledCalls") > 0 && c("numAwsRateLimitErrors") == c("throttledCalls") &&
        c("retries") >= c("throttledCalls") && c("serverErrors") == 0) { (stream, collector) =>
      // Put first: at a fiftieth of the quota the test's own writes would be throttled too.
      val during = kinesis.putAll(stream, records("storm", 30))
      simulator.admin.quotas(enabled = true, factor = 0.02)
      eventually("reads to be throttled") { simulator.admin.operationCounter("GetRecords", "throttled") >= 3 }
      during
    }
  }

  test("HTTP 500s and connection resets mid-query are retried, and counted") {
    survives("faults", c => c("serverErrors") > 0 && c("retries") >= c("serverErrors") && c("throttledCalls") == 0) {
      (stream, _) =>
      simulator.admin.faults(
        """[{"kind": "http500", "operations": ["GetRecords"], "probability": 0.5, "maxCount": 12},
          | {"kind": "reset", "operations": ["GetRecords"], "probability": 0.3, "maxCount": 6}]""".stripMargin, seed = 7)
      val during = kinesis.putAll(stream, records("fault", 30))
      eventually("the faults to fire") { simulator.admin.operationCounter("GetRecords", "faults") >= 10 }
      during
    }
  }

  test("expired shard iterators are renewed from the last record read") {
    survives("expiry") { (stream, _) =>
      simulator.admin.expireIterators()
      kinesis.putAll(stream, records("after-expiry", 30))
    }
  }

  test("iterators that expire again right after their renewal are renewed again, with backoff, per the retry options") {
    // The chaos soak met it: under an expiry storm a renewed iterator expired at once and the feed failed the query.
    survives("expiry-storm") { (stream, _) =>
      simulator.admin.faults("""[{"kind": "expireIterator", "operations": ["GetRecords"], "maxCount": 4}]""")
      val during = kinesis.putAll(stream, records("storm", 30))
      eventually("the expiries to fire") { simulator.admin.operationCounter("GetRecords", "faults") >= 4 }
      during
    }
  }
}
