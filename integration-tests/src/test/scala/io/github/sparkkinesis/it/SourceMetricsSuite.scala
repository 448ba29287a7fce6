package io.github.sparkkinesis.it

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.funsuite.AnyFunSuite

class SourceMetricsSuite extends AnyFunSuite with SourceTest {
  /** Reads `records` from a fresh 2-shard stream with Trigger.AvailableNow; returns the finished query. */
  private def drained(records: Seq[(String, String)], options: (String, String)*): StreamingQuery = {
    val stream = newStreamName("metrics")
    kinesis.createStream(stream, 2)
    kinesis.putAll(stream, records)
    val query = new Collector().start(kinesisReader(stream, ("initialPosition" -> "trim_horizon") +: options: _*),
      newCheckpoint(), Trigger.AvailableNow())
    assert(query.awaitTermination(120000))
    query
  }

  test("progress reports, with Databricks' names, what the batch holds, shard counts, lag, the buffer and calls") {
    val query = drained((1 to 25).map(i => (s"k$i", s"v$i")))
    val withData = query.recentProgress.filter(_.numInputRows > 0)
    assert(withData.map(_.numInputRows).sum == 25)
    for (p <- withData) {
      val metrics = p.sources.head.metrics.asScala
      assert(metrics("numProcessedRecords").toLong == p.numInputRows)
    }
    val metrics = withData.head.sources.head.metrics.asScala
    assert(metrics("numProcessedBytes").toLong > 0)
    assert(metrics("numTotalShards") == "2" && metrics("numClosedShards") == "0" && metrics("numRegisteredConsumers") == "0")
    assert(metrics("mode") == "polling" && metrics("numStreams") == "1")
    assert(metrics("kinesisCalls").toLong >= 2, "at least one GetRecords per shard")
    assert(metrics("throttledCalls") == "0" && metrics("numAwsRateLimitErrors") == "0" && metrics("retries") == "0")
    assert(metrics("totalPrefetchedBytes").toLong > 0, "the planned records are held until their batch commits")
    assert(metrics("fetchBufferSize").toLong == Runtime.getRuntime.maxMemory() / 8, "the default: an eighth of the heap")
    assert(metrics("reReadRanges") == "0")
    assert(metrics.contains("maxMsBehindLatest") && metrics("minMsBehindLatest").toLong >= 0 && metrics.contains("avgMsBehindLatest"))
  }

  test("fetchBufferSize=20gb (Databricks' default) is capped at a quarter of the executor's heap, said once, and reads") {
    val log = LogCapture.install()
    val query = try drained((1 to 30).map(i => (s"k$i", s"v$i")), "fetchBufferSize" -> "20gb") finally log.uninstall()
    val withData = query.recentProgress.filter(_.numInputRows > 0)
    assert(withData.map(_.numInputRows).sum == 30)
    val heap = Runtime.getRuntime.maxMemory()
    assert(withData.head.sources.head.metrics.get("fetchBufferSize").toLong == heap / 4, "the cap in force")
    val lines = log.text.linesIterator.filter(_.contains("fetchBufferSize asks for 20480 MiB")).toSeq
    assert(lines.size == 1, s"one INFO line per executor JVM, got ${lines.mkString("\n")}")
    assert(lines.head.startsWith("INFO") && lines.head.contains(s"at most ${heap / 4 / 1024 / 1024} MiB (1/4 of its"))
  }

  test("the scan node carries records and bytes read, and ranges re-read, in the Spark UI's SQL metrics") {
    val query = drained((1 to 8).map(i => (s"k$i", s"value-$i")))
    val plan = query.asInstanceOf[org.apache.spark.sql.execution.streaming.runtime.StreamingQueryWrapper] // Spark 4.2 internals
      .streamingQuery.lastExecution.executedPlan
    val metrics = plan.collectLeaves().flatMap(_.metrics).toMap
    assert(metrics("kinesisRecordsRead").value == 8)
    assert(metrics("kinesisBytesRead").value == (1 to 8).map(i => s"k$i".length + s"value-$i".length).sum)
    assert(metrics("kinesisRangesReRead").value == 0, "the batch should read what its fetch buffered")
  }
}
