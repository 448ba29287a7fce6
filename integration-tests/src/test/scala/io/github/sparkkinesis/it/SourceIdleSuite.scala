package io.github.sparkkinesis.it

import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** Idle streams and idle shards: no empty batches, and nothing waits for shards that have nothing to give. */
class SourceIdleSuite extends AnyFunSuite with SourceTest {

  /** Counts the short fetch jobs the source runs to look for new records. */
  private def countFetchJobs(): AtomicInteger = {
    val fetches = new AtomicInteger()
    spark.sparkContext.addSparkListener(new SparkListener {
      override def onJobStart(job: SparkListenerJobStart): Unit =
        if (Option(job.properties).flatMap(p => Option(p.getProperty("spark.job.description"))).exists(_.startsWith("Kinesis fetch"))) {
          fetches.incrementAndGet()
        }
    })
    fetches
  }

  test("an idle stream runs no batches, and a record put later is picked up") {
    val stream = newStreamName("idle")
    kinesis.createStream(stream, 2)
    val fetches = countFetchJobs()
    val collector = new Collector
    val query = collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), newCheckpoint(),
      Trigger.ProcessingTime(50))
    try {
      val start = fetches.get()
      eventually("the source to look for records several times") { fetches.get() >= start + 4 }
      assert(collector.batchIds.isEmpty, s"batches ran on an idle stream: ${collector.batchIds}")
      val put = kinesis.putAll(stream, Seq("k" -> "hello"))
      eventually("the record to be read", Duration.ofSeconds(20)) { collector.records.nonEmpty }
      assertExactly(collector.records, put)
      assert(collector.batchIds.size == 1)
    } finally query.stop()
  }

  test("one busy shard and three idle ones: batches do not wait for the idle shards") {
    val stream = newStreamName("busy")
    kinesis.createStream(stream, 4)
    val collector = new Collector
    // If idle shards held a batch back until maxFetchDuration, no record would arrive within the wait below.
    val query = collector.start(
      kinesisReader(stream, "initialPosition" -> "trim_horizon", "maxFetchDuration" -> "120s"),
      newCheckpoint(), Trigger.ProcessingTime(50))
    try {
      var put = Seq.empty[PutRecordResult]
      for (round <- 1 to 3) {
        put ++= kinesis.putAll(stream, (1 to 10).map(i => ("hot-key", s"r$round-$i")))
        eventually(s"round $round to be read", Duration.ofSeconds(30)) { collector.records.size == put.size }
      }
      assert(put.map(_.shardId).distinct.size == 1, "all records share one key, so one shard")
      assertExactly(collector.records, put)
    } finally query.stop()
  }
}
