package io.github.sparkkinesis.it

import java.math.BigInteger
import java.security.MessageDigest

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.source.ShardKey
import io.github.sparkkinesis.source.executor.KplDeaggregator
import org.apache.spark.sql.{DataFrame, Encoders, SaveMode}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.ListShardsRequest

/**
 * `aggregation=kpl` on the simulator: what the sink packs is read back raw with the unshaded SDK (and split
 * here), and through the source. The Python suite checks the same with `aws-kinesis-agg`.
 */
class SinkAggregationSuite extends AnyFunSuite with SimulatorSourceTest {

  private def options(stream: String): Map[String, String] = Map(
    "streamName" -> stream, "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region,
    "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey, "aggregation" -> "kpl")

  private def newStream(shards: Int): String = {
    val name = TestKinesis.freshName("sinkagg")
    simulatorKinesis.createStream(name, shards)
    name
  }

  /** A user record as a reader that splits aggregates finds it. */
  private final case class Found(shardId: String, key: String, data: String, sequence: BigInt, sub: Int)

  private def found(stream: String): Seq[Found] =
    StreamContents.read(simulatorKinesis.client, stream).flatMap { r =>
      if (!KplDeaggregator.isAggregated(r.data)) Seq(Found(r.shardId, r.partitionKey, r.text, BigInt(r.sequenceNumber), 0))
      else KplDeaggregator.split(ShardKey(stream, r.shardId), r.sequenceNumber, 0L, r.data).map { u =>
        Found(r.shardId, u.partitionKey, new String(u.data, "UTF-8"), BigInt(r.sequenceNumber), u.subSequenceNumber.toInt)
      }
    }

  /** Every shard the stream ever had, open or closed, with its hash-key range. */
  private def ranges(stream: String): Map[String, (BigInt, BigInt)] =
    simulatorKinesis.control.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().asScala
      .map(s => s.shardId() -> (BigInt(s.hashKeyRange().startingHashKey()), BigInt(s.hashKeyRange().endingHashKey())))
      .toMap

  private def hashOf(key: String): BigInt =
    BigInt(new BigInteger(1, MessageDigest.getInstance("MD5").digest(key.getBytes("UTF-8"))))

  /** Ids `0 until n` over 60 keys, as data "id" with key "k<id % 60>". */
  private def ids(from: Long, until: Long): DataFrame = spark.range(from, until, 1, 2).select(
    concat(lit("k"), (col("id") % 60).cast("string")).as("partitionKey"), col("id").cast("string").as("data"))

  test("batch write: user records packed per shard, each once, keys in order; the source splits them back") {
    val stream = newStream(4)
    val metrics = new StageAccumulables
    spark.sparkContext.addSparkListener(metrics)
    try {
      ids(0, 3000).write.format("kinesis").mode(SaveMode.Append).options(options(stream)).save()
      Wait.until("the write's metrics to arrive") { metrics("user records written (alone or inside KPL aggregates)") == 3000 }
    } finally spark.sparkContext.removeSparkListener(metrics)
    val raw = StreamContents.read(simulatorKinesis.client, stream)
    val aggregates = raw.count(r => KplDeaggregator.isAggregated(r.data))
    // A shard's last record in a task may be alone, and a lone record is sent plain: 2 tasks x 4 shards at most.
    assert(raw.size < 100 && raw.size - aggregates <= 8, s"3000 small records, few aggregates: $aggregates of ${raw.size}")
    assert(metrics("KPL aggregates written") == aggregates && metrics("records written to Kinesis") == raw.size)
    assert(metrics("user records per KPL aggregate (average over tasks that wrote aggregates)") > 20)

    val users = found(stream)
    assert(users.map(_.data.toLong).sorted == (0L until 3000L))
    val shards = ranges(stream)
    users.foreach { u =>
      val (lo, hi) = shards(u.shardId)
      assert(hashOf(u.key) >= lo && hashOf(u.key) <= hi, s"${u.key} packed into ${u.shardId}, outside its range")
      assert(u.key == s"k${u.data.toLong % 60}")
    }
    users.groupBy(_.key).foreach { case (k, rs) =>
      val order = rs.sortBy(u => (u.sequence, u.sub)).map(_.data.toLong)
      // Each input partition writes its ids in order; a key's ids from the two partitions interleave.
      Seq(order.filter(_ < 1500), order.filter(_ >= 1500)).foreach(p => assert(p == p.sorted, s"$k out of order"))
    }

    val read = spark.read.format("kinesis").options(options(stream) - "aggregation")
      .option("initialPosition", "trim_horizon").load()
      .select(col("partitionKey"), col("data").cast("string").as("data"), col("subSequenceNumber")).collect()
    assert(read.map(_.getString(1).toLong).sorted.toSeq == (0L until 3000L))
    assert(read.forall(r => r.getString(0) == s"k${r.getString(1).toLong % 60}"))
    assert(read.exists(_.getLong(2) > 0), "the source found sub-records")
  }

  test("split and merge while a streaming query writes: the source reads each user record once, in per-key order, " +
    "skipping the aggregates a reshard misplaced as the KCL does") {
    val stream = newStream(2)
    val input = MemoryStream[Long](Encoders.scalaLong, spark.sqlContext)
    val metrics = new StageAccumulables
    spark.sparkContext.addSparkListener(metrics)
    val query = input.toDF().select(concat(lit("k"), (col("value") % 60).cast("string")).as("partitionKey"),
        col("value").cast("string").as("data"))
      .writeStream.format("kinesis").options(options(stream))
      .option("checkpointLocation", TempDirs.create("sinkagg-ckpt").toString).start()
    try {
      input.addData(0L until 400L)
      query.processAllAvailable()
      simulatorKinesis.split(stream, "shardId-000000000000")
      input.addData(400L until 800L)
      query.processAllAvailable()
      val children = (ranges(stream).keySet -- Set("shardId-000000000000", "shardId-000000000001")).toSeq.sorted
      simulatorKinesis.merge(stream, children(1), "shardId-000000000001")
      input.addData(800L until 1200L)
      query.processAllAvailable()
      Wait.until("the last micro-batch's metrics to arrive") {
        metrics("user records written (alone or inside KPL aggregates)") >= 1200
      }
    } finally {
      query.stop()
      spark.sparkContext.removeSparkListener(metrics)
    }

    val shards = ranges(stream)
    assert(shards.size == 5, s"two parents, two children, one merged shard: $shards")
    def holds(shardId: String, key: String): Boolean = { val (lo, hi) = shards(shardId); hashOf(key) >= lo && hashOf(key) <= hi }
    // Seen raw: the aggregates holding a user record outside their shard's range, which a KCL reader drops whole.
    val misplaced = found(stream).groupBy(u => (u.shardId, u.sequence)).values.filterNot(_.forall(u => holds(u.shardId, u.key)))
    // A split that ends after a writer listed its shards (a second at most before its task began) sends its next
    // aggregates for the closed parent into a child that may not hold all their records; the writer sees where
    // they were stored and sends such an aggregate's records again, packed for the shards that hold them.
    assert(misplaced.flatten.size == metrics("user records sent again: a reshard put their aggregate in a shard that does not hold them all"),
      s"user records in misplaced aggregates: ${misplaced.flatten.size}")

    val collector = new Collector
    val reading = collector.start(kinesisReader(stream, "initialPosition" -> "trim_horizon"), newCheckpoint(),
      Trigger.AvailableNow())
    assert(reading.awaitTermination(120000), "the AvailableNow read did not end")
    reading.exception.foreach(e => throw e)
    val read = collector.records
    assert(read.map(_.data.toLong).sorted == (0L until 1200L), "every user record once")
    read.foreach(r => assert(holds(r.shardId, r.partitionKey), s"${r.partitionKey} read from ${r.shardId}"))
    val skipped = reading.recentProgress.flatMap(_.sources.head.metrics.asScala.get("numMisplacedAggregatesSkipped"))
    assert(skipped.map(_.toLong).maxOption.getOrElse(0L) == misplaced.size, "each misplaced aggregate skipped, counted")
    assert(read.map(_.shardId).toSet == shards.keySet, "each shard of each generation got records")
    // A record sent again comes after later ones of its key: order is kept for the keys the race did not touch.
    val repaired = misplaced.flatten.map(_.key).toSet
    read.filterNot(r => repaired(r.partitionKey)).groupBy(_.partitionKey).foreach { case (k, rs) =>
      val ids = rs.sortBy(_.batchId).map(_.data.toLong) // stable: within a batch, in the order rows were read
      assert(ids == ids.sorted, s"$k out of order: $ids")
    }
  }
}
