package io.github.sparkkinesis.it

import java.net.URI
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.Suite

/** What a source test sees of one row, in the order the sink received it. */
final case class ReadRecord(batchId: Long, partitionKey: String, data: String, shardId: String,
    sequenceNumber: String, subSequenceNumber: Long, stream: String = "")

/** Source tests against kinesis-mock. */
trait SourceTest extends EmulatorSuite with SourceTestBase { this: Suite =>
  override def endpoint: URI = emulator.endpoint
}

/** Source tests against the project's quota-enforcing, fault-injecting simulator. */
trait SimulatorSourceTest extends SimulatorSuite with SourceTestBase { this: Suite =>
  override def endpoint: URI = simulator.endpoint
  override def kinesis: TestKinesis = simulatorKinesis
  override def newStreamName(prefix: String): String = TestKinesis.freshName(prefix)
}

/**
 * Helpers that keep source tests short: a reader pointed at the endpoint under test, queries whose batches are
 * collected with their batch ids, and waits on conditions with a timeout.
 */
trait SourceTestBase extends SparkSuite { this: Suite =>
  def endpoint: URI
  def kinesis: TestKinesis
  def newStreamName(prefix: String): String

  def kinesisReader(stream: String, options: (String, String)*): DataFrame = {
    val base = Map(
      "streamName" -> stream,
      "endpoint" -> endpoint.toString,
      "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey,
      "awsSecretKey" -> TestEnv.secretKey)
    spark.readStream.format("kinesis").options(base ++ options).load()
  }

  def newCheckpoint(): String = TempDirs.create("kinesis-checkpoint-").toString

  /** Collects every batch a query writes, with its batch id. */
  final class Collector {
    private val rows = new ConcurrentLinkedQueue[ReadRecord]()
    private val batches = new ConcurrentLinkedQueue[java.lang.Long]()

    def start(df: DataFrame, checkpoint: String, trigger: Trigger): StreamingQuery =
      df.writeStream
        .option("checkpointLocation", checkpoint)
        .trigger(trigger)
        .foreachBatch { (batch: DataFrame, batchId: Long) =>
          batches.add(batchId)
          batch.collect().foreach { r: Row =>
            rows.add(ReadRecord(batchId, r.getAs[String]("partitionKey"), new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
              r.getAs[String]("shardId"), r.getAs[String]("sequenceNumber"), r.getAs[Long]("subSequenceNumber"),
              r.getAs[String]("stream")))
          }
        }
        .start()

    def records: Seq[ReadRecord] = rows.asScala.toSeq
    def batchIds: Seq[Long] = batches.asScala.map(_.longValue).toSeq
  }

  /** Runs the query with Trigger.AvailableNow until it stops by itself. */
  def readAvailableNow(df: DataFrame, checkpoint: String = newCheckpoint()): Collector = {
    val collector = new Collector
    val query = collector.start(df, checkpoint, Trigger.AvailableNow())
    assert(query.awaitTermination(Duration.ofMinutes(2).toMillis), "AvailableNow query did not stop within 2 minutes")
    query.exception.foreach(e => throw e)
    collector
  }

  def eventually(what: String, timeout: Duration = Duration.ofSeconds(60))(condition: => Boolean): Unit =
    Wait.until(what, timeout)(condition)

  /** Within each key, records come in the order they were put (across batches, splits and merges). */
  def assertKeyOrder(read: Seq[ReadRecord], put: Seq[PutRecordResult]): Unit = {
    val putOrder = put.zipWithIndex.map { case (p, i) => p.sequenceNumber -> i }.toMap
    for ((key, rs) <- read.groupBy(_.partitionKey)) {
      val order = rs.sortBy(_.batchId).map(r => putOrder(r.sequenceNumber))
      assert(order == order.sorted, s"key $key read out of order: $order")
    }
  }

  /** The source returned exactly `expected`, each once, and each shard's records in sequence order. */
  def assertExactly(read: Seq[ReadRecord], expected: Seq[PutRecordResult]): Unit = {
    val got = read.map(r => (r.shardId, r.sequenceNumber, r.partitionKey, r.data))
    val want = expected.map(p => (p.shardId, p.sequenceNumber, p.partitionKey, p.data))
    val duplicates = got.groupBy(identity).collect { case (k, v) if v.size > 1 => k }
    assert(duplicates.isEmpty, s"read more than once: ${duplicates.take(5)}")
    assert(got.toSet == want.toSet,
      s"missing ${(want.toSet -- got).take(5)}; unexpected ${(got.toSet -- want).take(5)} (${got.size} read, ${want.size} put)")
    for ((shard, rs) <- read.groupBy(r => (r.stream, r.shardId))) {
      val seqs = rs.sortBy(_.batchId).map(r => BigInt(r.sequenceNumber))
      assert(seqs == seqs.sorted, s"shard $shard read out of order")
    }
  }
}
