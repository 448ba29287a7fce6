package io.github.sparkkinesis.it

import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger, AtomicLong}

import scala.jdk.CollectionConverters._

import org.apache.spark.ExceptionFailure
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd, SparkListenerTaskStart}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.exceptions.TestFailedException
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.executor.Prefetcher

/**
 * The read engine (executors prefetch continuously into a bounded buffer) against the simulator: the buffer bound
 * holds through a catch-up, fetching goes on while a batch is processed, a stopped query's buffers are freed,
 * and AvailableNow reads everything put before its start however slowly Kinesis answers.
 */
class SourceEngineSuite extends AnyFunSuite with SimulatorSourceTest {

  /** Largest value `sample` took while `body` ran, sampled every few milliseconds. */
  private def peakDuring[T](sample: => Long)(body: => T): (T, Long) = {
    val peak = new AtomicLong()
    val running = new AtomicBoolean(true)
    val sampler = new Thread(() => while (running.get()) { peak.accumulateAndGet(sample, math.max); Thread.sleep(2) })
    sampler.setDaemon(true)
    sampler.start()
    try (body, peak.get()) finally { running.set(false); sampler.join() }
  }

  private def bigRecords(prefix: String, n: Int, bytes: Int) = (1 to n).map(i => (s"key-${i % 13}", s"$prefix-$i-" + "x" * bytes))

  test("a catch-up holds at most fetchBufferSize (and one response), reads every record once, and frees it all on stop") {
    val stream = newStreamName("bounded")
    kinesis.createStream(stream, 2)
    // The counts below are this JVM's: no other query's feeds may be left (a stopped query frees them at once).
    eventually("no feed of an earlier test to be left") { Prefetcher.feedCount == 0 }
    val before = Prefetcher.describe
    simulator.admin.quotas(enabled = false)
    try {
      val put = kinesis.putAll(stream, bigRecords("b", 600, 10 * 1024)) // about 6 MiB, six times the buffer
      val collector = new Collector
      val limit = 1024L * 1024
      val (_, peak) = peakDuring(Prefetcher.heldBytes) {
        val query = collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon", "fetchBufferSize" -> "1m"),
          newCheckpoint(), Trigger.ProcessingTime(0))
        try {
          try eventually("the backlog to be read", Duration.ofSeconds(120)) { collector.records.size >= put.size }
          catch {
            case e: TestFailedException => fail(s"${e.getMessage}; engine before the query: $before, now: ${Prefetcher.describe}")
          }
          assert(Prefetcher.feedCount == 2)
        } finally query.stop()
        eventually("the stopped query's buffers to be freed", Duration.ofSeconds(5)) {
          Prefetcher.heldBytes == 0 && Prefetcher.feedCount == 0
        }
      }
      assertExactly(collector.records, put)
      assert(peak > 0, "records were held")
      assert(peak <= 2 * limit, s"held $peak bytes with fetchBufferSize=$limit")
      assert(collector.batchIds.size >= 6, "a full buffer ends a batch: the backlog needs several")
    } finally simulator.admin.quotas(enabled = true, factor = 1.0)
  }

  test("with the buffer full, a call waits for room for a useful answer instead of asking for a few records") {
    val stream = newStreamName("nibble")
    kinesis.createStream(stream, 16)
    simulator.admin.quotas(enabled = false)
    try {
      // About 12 MiB, three times the buffer, spread over every shard (no shard reaches its tip early).
      val put = kinesis.putAll(stream, (1 to 12000).map(i => (s"key-$i", s"n-$i-" + "x" * 1000)))
      def served = {
        val shards = simulator.admin.counters().path("streams").path(stream).path("shards").elements().asScala.toSeq
        (shards.map(_.path("getRecordsCalls").asLong()).sum, shards.map(_.path("getRecordsRecords").asLong()).sum)
      }
      val collector = new Collector
      // Small batches free the full buffer a few hundred KiB at a time: room comes back in small pieces.
      val query = collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon", "fetchBufferSize" -> "4m",
        "maxRecordsPerTrigger" -> "400"), newCheckpoint(), Trigger.ProcessingTime(0))
      val (before, after) = try {
        // The middle of the catch-up: every shard behind its tip, the buffer full.
        eventually("a quarter of the backlog to be read", Duration.ofSeconds(120)) { collector.records.size >= 3000 }
        val before = served
        eventually("three quarters of the backlog to be read", Duration.ofSeconds(120)) { collector.records.size >= 9000 }
        val after = served
        eventually("the backlog to be read", Duration.ofSeconds(120)) { collector.records.size >= put.size }
        (before, after)
      } finally query.stop()
      assertExactly(collector.records, put)
      val (calls, records) = (after._1 - before._1, after._2 - before._2)
      // 4m: answers in flight may bring 128 KiB, and a call waits for room for 32 KiB of them (about 30 records):
      // measured 39 records a call (when first calls waited too; they hardly matter mid catch-up), and 14 when a
      // call took whatever room there was.
      assert(calls > 0 && records >= 25 * calls, s"$calls GetRecords calls for $records records in the middle of the catch-up")
    } finally simulator.admin.quotas(enabled = true, factor = 1.0)
  }

  test("a stopped query's calls give back their slots and reserved space at once, even calls that hang") {
    val stream = newStreamName("hung")
    kinesis.createStream(stream, 4)
    eventually("no call of an earlier test to be running") { Prefetcher.callsInFlightNow == 0 }
    val query = new Collector().start(kinesisReader(stream, "apiCallAttemptTimeout" -> "10min"), newCheckpoint(),
      Trigger.ProcessingTime(0))
    try {
      eventually("the query to read its shards") { Prefetcher.feedCount == 4 }
      simulator.admin.faults("""[{"kind": "hang", "operations": ["GetRecords"], "probability": 1.0, "hangMillis": 600000}]""")
      eventually("calls to hang") { Prefetcher.callsInFlightNow == 4 }
    } finally {
      query.stop()
      simulator.admin.clearFaults()
    }
    // Retried until they succeed (the default), these calls would hold four of the 32 slots for ten minutes.
    eventually("the hung calls to be given up", Duration.ofSeconds(10)) {
      Prefetcher.callsInFlightNow == 0 && Prefetcher.reservedBytes == 0 && Prefetcher.feedCount == 0
    }
  }

  test("feeds released under a waiting snapshot task do not report their cancelled calls as failures") {
    // Seen at 5,000 shards: a stop that Spark's cancellation of the query's jobs missed (a snapshot job submitted
    // as the stream thread was being interrupted) released the feeds under that job's tasks, which then failed
    // with their own calls' CancellationException, and the executor logged an ERROR for each.
    val stream = newStreamName("released")
    kinesis.createStream(stream, 4)
    eventually("no call of an earlier test to be running") { Prefetcher.callsInFlightNow == 0 }
    val (running, failed) = (new AtomicInteger, new ConcurrentLinkedQueue[String])
    val tasks = new SparkListener {
      override def onTaskStart(start: SparkListenerTaskStart): Unit = running.incrementAndGet()
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = {
        running.decrementAndGet()
        end.reason match { case f: ExceptionFailure => failed.add(f.toErrorString); case _ => }
      }
    }
    spark.sparkContext.addSparkListener(tasks)
    // Hung from the start: the first trigger's snapshot task waits up to a second for the shards' first answers
    // (an idle query runs no snapshot job while nothing changes, so it is the one task sure to look at these feeds).
    simulator.admin.faults("""[{"kind": "hang", "operations": ["GetRecords"], "probability": 1.0, "hangMillis": 600000}]""")
    val query = new Collector().start(kinesisReader(stream, "apiCallAttemptTimeout" -> "10min"), newCheckpoint(),
      Trigger.ProcessingTime(0))
    try {
      eventually("calls to hang") { Prefetcher.feedCount == 4 && Prefetcher.callsInFlightNow == 4 }
      val hung = Prefetcher.sourceIds.toSeq.flatMap(Prefetcher.feedsOf)
      Prefetcher.sourceIds.foreach(Prefetcher.release) // what the source's stop does in this JVM
      eventually("the released calls to be given up") { Prefetcher.callsInFlightNow == 0 }
      // The task's wait may end on the feeds being stopped before their calls come back cancelled, or before the
      // release: what the feeds report afterwards does not depend on which.
      val failures = hung.flatMap(f => f.failed.map(e => s"${f.key}: $e"))
      assert(hung.size == 4 && failures.isEmpty, s"released feeds report their cancelled calls as failures: $failures")
    } finally {
      query.stop()
      simulator.admin.clearFaults()
    }
    try eventually("the query's tasks to end") { running.get() <= 0 }
    finally spark.sparkContext.removeSparkListener(tasks)
    assert(failed.isEmpty, s"tasks failed: ${failed.asScala.map(_.linesIterator.next()).mkString("; ")}")
  }

  test("shards that never answer hold no batch back: the other shards' records are read") {
    // A snapshot waits for a shard's first answer a second at most (SnapshotJob.FirstPollWait), never the whole
    // maxFetchDuration: here every GetRecords on one of the two streams hangs for ten minutes.
    val (answering, silent) = (newStreamName("answering"), newStreamName("silent"))
    kinesis.createStream(answering, 2)
    kinesis.createStream(silent, 2)
    val put = kinesis.putAll(answering, (1 to 10).map(i => (s"key-$i", s"r$i")))
    eventually("no call of an earlier test to be running") { Prefetcher.callsInFlightNow == 0 }
    simulator.admin.faults(
      s"""[{"kind": "hang", "operations": ["GetRecords"], "stream": "$silent", "hangMillis": 600000}]""")
    val answeredBefore = Prefetcher.firstAnswerCount
    val collector = new Collector
    val query = collector.start(
      kinesisReader(s"$answering,$silent", "initialPosition" -> "trim_horizon", "maxFetchDuration" -> "10min",
        "apiCallAttemptTimeout" -> "10min"),
      newCheckpoint(), Trigger.ProcessingTime(0))
    try {
      eventually("the answering stream's records", Duration.ofSeconds(60)) { collector.records.size >= put.size }
      assertExactly(collector.records, put)
      val feeds = Prefetcher.sourceIds.toSeq.flatMap(Prefetcher.feedsOf).filter(_.key.stream == silent)
      assert(feeds.size == 2 && feeds.forall(!_.hasPolled), "the silent stream's shards never answered")
      assert(Prefetcher.firstAnswerCount - answeredBefore == 2, "first answers: the answering stream's two shards")
    } finally {
      query.stop()
      simulator.admin.clearFaults()
    }
  }

  test("fetching goes on while a batch is processed") {
    val stream = newStreamName("overlap")
    kinesis.createStream(stream, 1)
    kinesis.putAll(stream, Seq("k" -> "first"))
    val callsDuringBatch = new AtomicLong(-1)
    def calls = simulator.admin.operationCounter("GetRecords", "calls")
    val df: DataFrame = kinesisReader(stream, "initialPosition" -> "trim_horizon")
    val query = df.writeStream.option("checkpointLocation", newCheckpoint()).foreachBatch { (batch: DataFrame, id: Long) =>
      if (id == 0) {
        batch.collect()
        val before = calls
        // The old engine fetched only inside latestOffset: no call could happen while this batch runs.
        Wait.until("GetRecords calls while the batch is processed", Duration.ofSeconds(20)) { calls >= before + 3 }
        callsDuringBatch.set(calls - before)
      }
    }.start()
    try eventually("the first batch to end") { callsDuringBatch.get() >= 3 }
    finally query.stop()
  }

  test("AvailableNow under a throttling storm reads every record from before its start and stops; a record put " +
    "while it reads is read by it or by the next run, once") {
    val stream = newStreamName("storm")
    kinesis.createStream(stream, 2)
    val before = kinesis.putAll(stream, (1 to 40).map(i => (s"key-${i % 7}", s"before-$i")))
    simulator.admin.quotas(enabled = true, factor = 0.1) // half a GetRecords call per second per shard
    try {
      val collector = new Collector
      val checkpoint = newCheckpoint()
      // Five records per call and 100 ms per snapshot: the old engine gave up after five snapshots without progress.
      val reader = kinesisReader(stream, "initialPosition" -> "trim_horizon", "maxRecordsPerFetch" -> "5",
        "maxFetchDuration" -> "100ms")
      val query = collector.start(reader, checkpoint, Trigger.AvailableNow())
      eventually("reads to be throttled") { simulator.admin.operationCounter("GetRecords", "throttled") >= 1 }
      simulator.admin.quotas(enabled = false)
      val late = kinesis.putAll(stream, Seq("late" -> "after the start"))
      simulator.admin.quotas(enabled = true, factor = 0.1)
      assert(query.awaitTermination(Duration.ofMinutes(3).toMillis), "AvailableNow did not stop")
      query.exception.foreach(e => throw e)
      // The run ends at the tip each shard's first read after its start found (docs/design/offsets.md): the late
      // record is in it when its shard was still behind that tip when it was put, else in the next run.
      val first = collector.records
      val lateRead = first.exists(_.partitionKey == "late")
      assertExactly(first, if (lateRead) before ++ late else before)
      simulator.admin.quotas(enabled = false)
      assertExactly(readAvailableNow(reader, checkpoint).records, if (lateRead) Nil else late)
    } finally simulator.admin.quotas(enabled = true, factor = 1.0)
  }

  test("a shard with a record a second is polled about once a second, and every record is read") {
    val stream = newStreamName("sparse")
    kinesis.createStream(stream, 1)
    val shard = kinesis.shardIds(stream).head
    def calls = simulator.admin.shardCounter(stream, shard, "getRecordsCalls")
    val collector = new Collector
    val query = collector.start(kinesisReader(stream), newCheckpoint(), Trigger.ProcessingTime(0))
    try {
      eventually("the shard to be polled") { calls > 0 }
      val (before, started) = (calls, System.nanoTime())
      val put = (1 to 8).flatMap { i =>
        val sentNanos = System.nanoTime()
        val p = kinesis.putAll(stream, Seq(s"k$i" -> s"v$i"))
        eventually(s"record $i to be read", Duration.ofSeconds(20)) { collector.records.size >= i }
        Thread.sleep(math.max(0L, 1000L - (System.nanoTime() - sentNanos) / 1000000)) // the traffic: one a second
        p
      }
      val (made, seconds) = (calls - before, (System.nanoTime() - started) / 1e9)
      assertExactly(collector.records, put)
      info(f"$made GetRecords calls in $seconds%.1f s")
      // Paced at 200 ms after each record, then 400 and 800 ms after empty answers, it was 2 to 2.5 calls a second.
      assert(made <= 1.6 * seconds, f"$made GetRecords calls in $seconds%.1f s for a record a second")
    } finally query.stop()
  }

  test("many idle shards and a small buffer: every shard gets its calls, and a record on any of them is read") {
    val stream = newStreamName("wide")
    kinesis.createStream(stream, 200)
    val collector = new Collector
    // 64 MiB holds the space of a few full responses only: calls must queue fairly, and space a quiet shard's
    // call did not use must go to the next one (a queue woken only by commits starved here, idle streams commit nothing).
    val query = collector.start(kinesisReader(stream, "fetchBufferSize" -> "64m"), newCheckpoint(), Trigger.ProcessingTime(0))
    try {
      eventually("all 200 shards to be polled", Duration.ofSeconds(60)) {
        Prefetcher.feedCount == 200 && Prefetcher.unansweredFeedCount == 0
      }
      val put = kinesis.putAll(stream, (1 to 20).map(i => (s"spread-$i", s"v$i")))
      eventually("the records to be read", Duration.ofSeconds(60)) { collector.records.size >= put.size }
      assertExactly(collector.records, put)
    } finally query.stop()
  }

  test("an idle query asks ListShards only for shards created since its listing, and still finds a split") {
    val stream = newStreamName("relist")
    kinesis.createStream(stream, 20)
    def listing = {
      val counters = simulator.admin.counters().path("streams").path(stream)
      (counters.path("operations").path("ListShards").path("calls").asLong(), counters.path("listedShards").asLong())
    }
    val collector = new Collector
    val query = collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), newCheckpoint(),
      Trigger.ProcessingTime(0))
    try {
      val first = kinesis.putAll(stream, Seq("k" -> "before"))
      eventually("the first record to be read") { collector.records.size == 1 }
      val (calls, listed) = listing
      eventually("the idle query to relist five times", Duration.ofSeconds(30)) { listing._1 >= calls + 5 }
      val (callsNow, listedNow) = listing
      // All 20 shards each time would be 100 and more; at most one complete listing a minute is 20.
      assert(listedNow - listed <= 20, s"${listedNow - listed} shards listed by ${callsNow - calls} ListShards calls")
      val parent = first.head.shardId
      kinesis.split(stream, parent)
      val after = kinesis.putAll(stream, (1 to 5).map(i => "k" -> s"after-$i"))
      assert(after.forall(_.shardId != parent), "the key's records now go to a child")
      eventually("the child's records to be read", Duration.ofSeconds(30)) { collector.records.size >= 1 + after.size }
      assertExactly(collector.records, first ++ after)
      assertKeyOrder(collector.records, first ++ after)
    } finally query.stop()
  }
}
