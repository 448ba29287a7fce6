package io.github.sparkkinesis.it.bench

import java.io.File
import java.math.BigInteger
import java.util.concurrent.{Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import io.github.sparkkinesis.it.{KinesisSimulator, StreamContents, TestEnv, TestKinesis}
import org.apache.spark.sql.{SaveMode, SparkSession}
import org.apache.spark.sql.functions.{col, udf}
import software.amazon.awssdk.services.kinesis.model.ListShardsRequest

/**
 * The sink against the simulator with AWS's write quotas on: the delivered rate as a fraction of what the shards
 * can take, and the fraction of record attempts refused as throttled, per flow-control mode and shape.
 *
 * Figures come from the simulator's own counters, sampled every 200 ms: the window starts `warmup` seconds after
 * the first record is stored and ends when 90 % of the records are stored (the tail, where one task has finished
 * before the other, measures the input, not the controller). "Achievable" is the aggregate quota, or with hot keys
 * what the hottest shard allows: its quota divided by its share of the records. A run is cut after twice its
 * planned length (plus 30 s for Spark to start it); only runs that finish are checked for loss (every record read
 * back) and duplicates.
 *
 * Usage: SinkQuotaBench --out FILE [--seconds S] [--quick] [--modes adaptive,ladder,aimd] [--quota-factor F]
 * [--shapes 1x1,4x2,4x2hot]
 * (F scales the simulator's quotas, for a machine that cannot write 16 shards' worth of records per second)
 */
object SinkQuotaBench {
  final case class Shape(shards: Int, tasks: Int, hotKeys: Boolean) {
    def weights: Seq[Double] =
      if (!hotKeys || shards == 1) Seq.fill(shards)(1.0 / shards)
      else HotShare +: Seq.fill(shards - 1)((1 - HotShare) / (shards - 1))
    def label: String = s"$shards shard(s) x $tasks task(s)${if (hotKeys) ", hot key" else ""}"
    /** For `--shapes`: 4x2, 4x2hot. */
    def id: String = s"${shards}x$tasks${if (hotKeys) "hot" else ""}"
  }

  val HotShare = 0.4
  val KeysPerShard = 250
  val RecordBytes = 100
  val QuotaPerShard = 1000.0

  final case class Options(out: File, seconds: Int, warmup: Int, quick: Boolean, modes: Seq[String],
      quotaFactor: Double, shapes: Option[Seq[String]])

  def parse(args: Seq[String]): Options = {
    def value(name: String): Option[String] = args.indexOf(name) match {
      case -1 => None
      case i => args.lift(i + 1).orElse(throw new IllegalArgumentException(s"$name needs a value"))
    }
    val quick = args.contains("--quick")
    Options(
      out = new File(value("--out").getOrElse(throw new IllegalArgumentException("--out FILE is required"))),
      seconds = value("--seconds").map(_.toInt).getOrElse(if (quick) 8 else 20),
      warmup = if (quick) 3 else 5,
      quick = quick,
      modes = value("--modes").map(_.split(",").toSeq).getOrElse(Seq("adaptive", "ladder", "aimd")),
      quotaFactor = value("--quota-factor").map(_.toDouble).getOrElse(1.0),
      shapes = value("--shapes").map(_.split(",").toSeq))
  }

  def shapes(quick: Boolean): Seq[Shape] =
    if (quick) Seq(Shape(1, 2, hotKeys = false))
    else Seq(Shape(1, 1, false), Shape(1, 2, false), Shape(4, 1, false), Shape(4, 2, false), Shape(16, 2, false),
      Shape(4, 2, hotKeys = true))

  def main(args: Array[String]): Unit = {
    val options = parse(args.toSeq)
    val simulator = KinesisSimulator.start()
    val spark = SparkSession.builder().master("local[2]").appName("SinkQuotaBench")
      .config("spark.ui.enabled", "false").getOrCreate()
    val mapper = new ObjectMapper()
    try {
      val kinesis = new TestKinesis(simulator.endpoint)
      val runs = mapper.createArrayNode()
      val selected = shapes(options.quick).filter(s => options.shapes.forall(_.contains(s.id)))
      for (mode <- options.modes; shape <- selected) {
        val run = new SinkQuotaRun(spark, simulator, kinesis, mode, shape, options.seconds, options.warmup,
          options.quotaFactor).run()
        println(f"$mode%-9s ${shape.label}%-32s ${run.path("fractionOfAchievable").asDouble()}%.3f of achievable, " +
          f"${run.path("throttledFraction").asDouble()}%.3f throttled, lost ${run.path("lost").asText()}")
        runs.add(run)
      }
      val root = mapper.createObjectNode()
      root.set[ObjectNode]("runs", runs)
      Option(options.out.getAbsoluteFile.getParentFile).foreach(_.mkdirs())
      mapper.writerWithDefaultPrettyPrinter().writeValue(options.out, root)
      println(s"wrote ${options.out}")
    } finally {
      spark.stop()
      simulator.close()
    }
  }
}

private final case class Sample(atMillis: Long, stored: Long, throttled: Long, perShard: Map[String, Long])

/** One measured write: a fresh stream, a batch write of about `seconds + warmup` at the achievable rate. */
final class SinkQuotaRun(spark: SparkSession, simulator: KinesisSimulator, kinesis: TestKinesis, mode: String,
    shape: SinkQuotaBench.Shape, seconds: Int, warmup: Int, quotaFactor: Double = 1.0) {
  import SinkQuotaBench._

  private val mapper = new ObjectMapper()
  private val stream = TestKinesis.freshName(s"quota-$mode")

  def run(): ObjectNode = {
    simulator.admin.quotas(enabled = true, factor = quotaFactor)
    kinesis.createStream(stream, shape.shards)
    val quota = shape.shards * QuotaPerShard * quotaFactor
    val achievable = QuotaPerShard * quotaFactor / shape.weights.max
    val total = (achievable * (seconds + warmup)).toLong
    val startKeys = kinesis.client.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().asScala
      .map(s => new BigInteger(s.hashKeyRange().startingHashKey())).sortWith(_.compareTo(_) < 0).toVector
    val df = input(total, startKeys)

    val pool = Executors.newSingleThreadScheduledExecutor()
    val samples = new java.util.concurrent.ConcurrentLinkedQueue[Sample]()
    val trace = new FlowTraceCapture
    val start = System.currentTimeMillis()
    pool.scheduleAtFixedRate(() => samples.add(sample()), 0, 200, TimeUnit.MILLISECONDS)
    val group = s"quota-bench-$stream"
    val writing = Future {
      spark.sparkContext.setJobGroup(group, group, interruptOnCancel = true)
      df.write.format("kinesis").mode(SaveMode.Append).options(Map(
        "streamName" -> stream, "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region,
        "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey, "flowControl" -> mode)).save()
    }(ExecutionContext.global)
    // Twice the planned length, plus the seconds Spark may take to start the job on a busy machine.
    val completed = Try(Await.result(writing, (2 * (seconds + warmup) + 30).seconds)).isSuccess
    if (!completed) spark.sparkContext.cancelJobGroup(group)
    pool.shutdown()
    pool.awaitTermination(5, TimeUnit.SECONDS)
    samples.add(sample())
    val lines = trace.drain()
    trace.close()

    val series = samples.asScala.toVector.sortBy(_.atMillis)
    // Spark takes seconds to start the job: warm-up counts from the first record stored.
    val firstStored = series.find(_.stored > 0).map(_.atMillis).getOrElse(start)
    val from = series.find(_.atMillis - firstStored >= warmup * 1000L).getOrElse(series.head)
    val to = series.find(_.stored >= 0.9 * total).getOrElse(series.last)
    val windowSeconds = math.max(0.001, (to.atMillis - from.atMillis) / 1000.0)
    val delivered = (to.stored - from.stored) / windowSeconds
    val attempts = (to.stored - from.stored) + (to.throttled - from.throttled)
    val throttledFraction = if (attempts == 0) 0.0 else (to.throttled - from.throttled).toDouble / attempts

    val node = mapper.createObjectNode()
    node.put("mode", mode).put("shards", shape.shards).put("tasks", shape.tasks)
      .put("keys", if (shape.hotKeys) "hot" else "uniform").put("recordBytes", RecordBytes)
      .put("seconds", windowSeconds).put("warmupSeconds", warmup.toDouble)
      .put("quotaRecordsPerSecond", quota).put("achievableRecordsPerSecond", achievable)
      .put("deliveredRecordsPerSecond", delivered).put("fractionOfAchievable", delivered / achievable)
      .put("throttledFraction", throttledFraction).put("records", total).put("completed", completed)
    // Each shard's records per second over the window: which shard held the writer back.
    val perShard = node.putObject("storedPerShardPerSecond")
    to.perShard.keys.toSeq.sorted.foreach { id =>
      perShard.put(id, (to.perShard(id) - from.perShard.getOrElse(id, 0L)) / windowSeconds)
    }
    if (completed) {
      val (lost, duplicates) = verify(total)
      node.put("lost", lost).put("duplicates", duplicates)
    node.put("traceThrottled", lines.map(_.throttled.toLong).sum)
    } else node.putNull("lost").putNull("duplicates")
    val traceNode = node.putArray("trace")
    lines.foreach { l =>
      traceNode.addObject().put("t", (l.epochMillis - firstStored) / 1000.0).put("task", l.task).put("records", l.records)
        .put("throttled", l.throttled).put("batch", l.batch).put("pauseMs", l.pauseMs)
    }
    node
  }

  /**
   * `total` rows in `shape.tasks` partitions. Each row draws a shard with the shape's weights and one of
   * `KeysPerShard` keys of that shard (seeded by the row id, so every run draws the same); a key always goes to one
   * shard, by an explicit hash key inside the shard's range, as a real key's MD5 does: a hot key is a hot shard.
   */
  private def input(total: Long, startKeys: Vector[BigInteger]) = {
    val weights = shape.weights
    val cumulative = weights.scanLeft(0.0)(_ + _).tail.toArray
    val starts = startKeys.map(_.toString).toArray
    val top = BigInteger.ONE.shiftLeft(128)
    // SplittableRandom mixes its seed: java.util.Random's first draws for consecutive seeds are correlated, which
    // sent runs of rows to one shard and measured bursts, not the controller.
    def draw(id: Long): (Int, Int) = {
      val random = new java.util.SplittableRandom(id)
      val x = random.nextDouble() // one draw: a draw inside indexWhere's predicate would be one per shard tried
      val shard = math.max(0, cumulative.indexWhere(x < _))
      (shard, random.nextInt(KeysPerShard))
    }
    val partitionKey = udf { (id: Long) => val (shard, key) = draw(id); s"s$shard-k$key" }
    val hashKey = udf { (id: Long) =>
      val (shard, key) = draw(id)
      val start = new BigInteger(starts(shard))
      val end = if (shard + 1 < starts.length) new BigInteger(starts(shard + 1)) else top
      start.add(end.subtract(start).multiply(BigInteger.valueOf(key)).divide(BigInteger.valueOf(KeysPerShard))).toString
    }
    val payload = udf((id: Long) => f"$id%020d".padTo(RecordBytes, '.'))
    spark.range(0, total, 1, shape.tasks).select(
      partitionKey(col("id")).as("partitionKey"),
      payload(col("id")).as("data"),
      hashKey(col("id")).as("explicitHashKey"))
  }

  private def sample(): Sample = {
    val shards = simulator.admin.counters().path("streams").path(stream).path("shards")
    val perShard = shards.fields().asScala.map(e => e.getKey -> e.getValue.path("putRecords").asLong()).toMap
    val throttled = shards.elements().asScala.map(_.path("throttledPutRecords").asLong()).sum
    Sample(System.currentTimeMillis(), perShard.values.sum, throttled, perShard)
  }

  /** Reads the stream back with quotas off: (ids never stored, ids stored more than once). */
  private def verify(total: Long): (Long, Long) = {
    simulator.admin.quotas(enabled = false)
    val ids = try StreamContents.read(kinesis.client, stream).map(_.text.takeWhile(_ != '.').toLong)
      finally simulator.admin.quotas(enabled = true, factor = quotaFactor)
    val counts = ids.groupBy(identity).view.mapValues(_.size).toMap
    val lost = (0L until total).count(id => !counts.contains(id)).toLong
    (lost, counts.values.map(_ - 1).sum.toLong)
  }
}
