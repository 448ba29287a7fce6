package io.github.sparkkinesis.it

import java.time.Duration

import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/** Idle streams and idle shards: no empty batches, and nothing waits for shards that have nothing to give. */
class SourceIdleSuite extends AnyFunSuite with SourceTest {

  /** The descriptions of the short fetch jobs the source runs to look for new records, in order. */
  private def recordFetchJobs(): java.util.concurrent.ConcurrentLinkedQueue[String] = {
    val fetches = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    spark.sparkContext.addSparkListener(new SparkListener {
      override def onJobStart(job: SparkListenerJobStart): Unit =
        Option(job.properties).flatMap(p => Option(p.getProperty("spark.job.description")))
          .filter(_.startsWith("Kinesis fetch")).foreach(fetches.add)
    })
    fetches
  }

  test("an idle stream runs no batches and no Spark jobs; a record put later is signalled and read at once") {
    val stream = newStreamName("idle")
    kinesis.createStream(stream, 2)
    val fetches = recordFetchJobs()
    val collector = new Collector
    val query = collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), newCheckpoint(),
      Trigger.ProcessingTime(50))
    try {
      // The shards' first answers may each start a job; then the query goes quiet.
      var (seen, since) = (-1, System.nanoTime())
      eventually("the first looks for records to settle") {
        if (fetches.size != seen) { seen = fetches.size; since = System.nanoTime() }
        seen >= 1 && System.nanoTime() - since > 1500L * 1000 * 1000
      }
      val quiet = fetches.size
      Thread.sleep(3000) // an observation window: with a job per trigger, a 50 ms trigger would run dozens in it
      assert(fetches.size <= quiet, s"jobs on an idle stream: ${fetches.size - quiet} in 3 s")
      assert(collector.batchIds.isEmpty, s"batches ran on an idle stream: ${collector.batchIds}")
      val before = fetches.size
      val put = kinesis.putAll(stream, Seq("k" -> "hello"))
      eventually("the record to be read", Duration.ofSeconds(20)) { collector.records.nonEmpty }
      assertExactly(collector.records, put)
      assert(collector.batchIds.size == 1)
      // Found by a job its executor's signal started, not by the idle stream's periodic check (every 10 s).
      val after = fetches.toArray.toSeq.drop(before)
      assert(after.nonEmpty && !after.head.toString.contains("periodic"), s"jobs after the put: $after")
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
