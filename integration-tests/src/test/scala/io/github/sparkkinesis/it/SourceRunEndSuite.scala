package io.github.sparkkinesis.it

import java.nio.file.{Files, Paths}
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicBoolean

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.FetchPlanner

/**
 * Where `Trigger.AvailableNow` and batch reads end (docs/design/offsets.md, "The tip seen at start"): on Kinesis'
 * positions, not on the driver's clock, and for a closed shard only at its end; where `latest` starts: on Kinesis'
 * clock, which its answers' `Date` headers bound. On the simulator, whose
 * `clockOffsetMs` puts Kinesis' clock ahead of or behind this machine's and whose `splitEndAnswer` returns a closed
 * shard's end in an answer of its own, after its last records (AWS does not promise one answer for both).
 */
class SourceRunEndSuite extends AnyFunSuite with SimulatorSourceTest {
  override protected def simulatorOptions: Seq[String] = Seq("--quotas", "off")

  private def batchRead(stream: String): Seq[ReadRecord] =
    spark.read.format("kinesis").options(Map(
      "streamName" -> stream, "endpoint" -> endpoint.toString, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey, "initialPosition" -> "trim_horizon"))
      .load().collect().toSeq.map { r =>
        ReadRecord(0, r.getAs[String]("partitionKey"), new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
          r.getAs[String]("shardId"), r.getAs[String]("sequenceNumber"), r.getAs[Long]("subSequenceNumber"))
      }

  private def reader(stream: String, options: (String, String)*): DataFrame =
    kinesisReader(stream, ("initialPosition" -> "trim_horizon") +: options: _*)

  private def keyed(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 7}", f"$prefix-$i%04d"))

  private def withSettings[A](json: String, reset: String)(body: => A): A = {
    simulator.admin.settings(json)
    try body finally simulator.admin.settings(reset)
  }

  for (offsetMs <- Seq(5000L, -5000L)) {
    val ahead = if (offsetMs > 0) "ahead of" else "behind"
    test(s"Kinesis' clock ${math.abs(offsetMs)} ms $ahead the driver's: AvailableNow and a batch read started right " +
      "after the last put read every record put before, once; the next run reads the rest") {
      withSettings(s"""{"clockOffsetMs": $offsetMs}""", """{"clockOffsetMs": 0}""") {
        val stream = newStreamName("skew")
        kinesis.createStream(stream, 2)
        val first = kinesis.putAll(stream, keyed("first", 30))
        val arrival = kinesis.arrivalMillis(stream, first.last.shardId).max
        assert(math.abs(arrival - System.currentTimeMillis() - offsetMs) < 2000, "the simulator's clock is offset")
        val checkpoint = newCheckpoint()
        assertExactly(readAvailableNow(reader(stream), checkpoint).records, first)
        assertExactly(readAvailableNow(reader(stream, "consumerMode" -> "efo")).records, first)
        assertExactly(batchRead(stream), first)
        val second = kinesis.putAll(stream, keyed("second", 20))
        val next = readAvailableNow(reader(stream), checkpoint).records
        assertExactly(next, second)
        assertKeyOrder(next, second)
      }
    }

    test(s"latest with Kinesis' clock ${math.abs(offsetMs)} ms $ahead the driver's: every record put after the start " +
      "is read, none put before it") {
      withSettings(s"""{"clockOffsetMs": $offsetMs}""", """{"clockOffsetMs": 0}""") {
        val stream = newStreamName("latest-skew")
        kinesis.createStream(stream, 2)
        val old = kinesis.putAll(stream, keyed("old", 10))
        val oldDone = System.currentTimeMillis()
        Wait.until("the old records to be older than latest reaches back") {
          System.currentTimeMillis() - oldDone > FetchPlanner.LatestLookBackMillis
        }
        val checkpoint = newCheckpoint()
        val collector = new Collector
        val query = collector.start(kinesisReader(stream), checkpoint, Trigger.ProcessingTime(100))
        try {
          val pin = Paths.get(checkpoint, "sources", "0", "kinesis-initial-offset.json")
          Wait.until("latest to be pinned") { Files.exists(pin) }
          val fresh = kinesis.putAll(stream, keyed("fresh", 20))
          Wait.until("the records put after the start to be read") { collector.records.size >= fresh.size }
          query.processAllAvailable()
          assertExactly(collector.records, fresh)
          assert(!collector.records.exists(r => old.exists(_.sequenceNumber == r.sequenceNumber)))
        } finally query.stop()
      }
    }
  }

  test("AvailableNow while a producer keeps writing: it stops, holds every record put before it started, and the " +
    "next run reads the rest, each record once") {
    withSettings("""{"clockOffsetMs": 3000}""", """{"clockOffsetMs": 0}""") {
      val stream = newStreamName("busy")
      kinesis.createStream(stream, 2)
      val put = new ConcurrentLinkedQueue[PutRecordResult]()
      put.addAll(kinesis.putAll(stream, keyed("warm", 20)).asJava)
      val stop = new AtomicBoolean(false)
      val producer = new Thread(() => {
        var i = 0
        while (!stop.get()) { i += 1; put.addAll(kinesis.putAll(stream, Seq((s"key-${i % 7}", f"live-$i%05d"))).asJava) }
      })
      producer.start()
      val checkpoint = newCheckpoint()
      try {
        Wait.until("the producer to have written") { put.size > 40 }
        val before = put.asScala.toSeq
        val first = readAvailableNow(reader(stream), checkpoint).records
        val got = first.map(_.sequenceNumber).toSet
        assert(before.forall(p => got(p.sequenceNumber)), "a record put before the run started is missing")
        stop.set(true)
        producer.join()
        val rest = readAvailableNow(reader(stream), checkpoint).records
        val all = put.asScala.toSeq
        assertExactly(first ++ rest, all)
      } finally { stop.set(true); producer.join() }
    }
  }

  for (offsetMs <- Seq(3000L, -3000L)) {
    test(s"AvailableNow on a shard read slower than it is written (Kinesis' clock $offsetMs ms off) still ends: " +
      "every record put before the start once, the rest in the next run") {
      withSettings(s"""{"clockOffsetMs": $offsetMs}""", """{"clockOffsetMs": 0}""") {
        val stream = newStreamName("slow")
        kinesis.createStream(stream, 1)
        val put = new ConcurrentLinkedQueue[PutRecordResult]()
        val stop = new AtomicBoolean(false)
        // 20 records a second, while the query reads one record a call and five calls a second: it never reaches
        // the tip, and ends at the first record that surely arrived after its start.
        val producer = new Thread(() => {
          var i = 0
          while (!stop.get()) {
            i += 1
            put.addAll(kinesis.putAll(stream, Seq((s"key-${i % 7}", f"slow-$i%05d"))).asJava)
            Thread.sleep(50)
          }
        })
        producer.start()
        val checkpoint = newCheckpoint()
        val slow = reader(stream, "maxRecordsPerFetch" -> "1", "minFetchPeriod" -> "200ms")
        try {
          Wait.until("the producer to have written") { put.size >= 20 }
          val before = put.asScala.toSeq
          val first = readAvailableNow(slow, checkpoint).records
          val got = first.map(_.sequenceNumber).toSet
          assert(before.forall(p => got(p.sequenceNumber)), "a record put before the run started is missing")
          stop.set(true)
          producer.join()
          val all = put.asScala.toSeq
          assert(first.size < all.size, "the run stopped before the tip, as the test means it to")
          assertExactly(first ++ readAvailableNow(reader(stream), checkpoint).records, all)
        } finally { stop.set(true); producer.join() }
      }
    }
  }

  test("a closed shard's end in an answer of its own: AvailableNow (polling, fan-out) and a batch read go on to " +
    "the children, across a split and a merge") {
    withSettings("""{"splitEndAnswer": true}""", """{"splitEndAnswer": false}""") {
      val stream = newStreamName("ends")
      kinesis.createStream(stream, 2)
      val Seq(a, b) = kinesis.shardIds(stream).sorted
      val before = kinesis.putAll(stream, keyed("before", 30))
      kinesis.split(stream, a)
      val children = (kinesis.shardIds(stream).toSet -- Set(a, b)).toSeq.sorted
      val split = kinesis.putAll(stream, keyed("split", 30))
      kinesis.merge(stream, children(1), b)
      val merged = kinesis.putAll(stream, keyed("merged", 30))
      val all = before ++ split ++ merged
      assert(merged.exists(p => !Set(a, b).contains(p.shardId) && !children.contains(p.shardId)), "the merged shard has records")
      // Enhanced fan-out: the event with a closed shard's last records has a continuation, its end comes next.
      for (mode <- Seq("polling", "efo")) {
        val read = readAvailableNow(reader(stream, "consumerMode" -> mode)).records
        assertExactly(read, all)
        assertKeyOrder(read, all)
      }
      // A batch read's rows come partition by partition: per-shard order is what it promises (assertExactly).
      assertExactly(batchRead(stream), all)
    }
  }
}
