package io.github.sparkkinesis.it

import java.math.BigInteger
import java.time.Duration

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.it.bench.{SinkQuotaBench, SinkQuotaRun}
import org.apache.spark.sql.SaveMode
import org.apache.spark.sql.functions.{col, concat, lit, when}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The sink against the simulator's write quotas, for 1 and 4 shards and 1 and 2 writer tasks: every record
 * stored exactly once, the shards did throttle, and the adaptive controller answered with pacing. Quotas are a
 * quarter of AWS's (250 records/s per shard) so that one busy CI machine can exceed them with four shards. The rates
 * themselves (>= 95 % of the quota, <= 5 % throttled) are measured by `make bench` (SinkQuotaBench), not here:
 * short runs on a shared CI machine are not a fair measure.
 */
class SinkQuotaSuite extends AnyFunSuite with SimulatorSuite with SparkSuite {
  for (shards <- Seq(1, 4); tasks <- Seq(1, 2)) {
    test(s"write quota on, $shards shard(s) x $tasks task(s): nothing lost or doubled, throttling answered by pacing") {
      val run = new SinkQuotaRun(spark, simulator, simulatorKinesis, "adaptive",
        SinkQuotaBench.Shape(shards, tasks, hotKeys = false), seconds = 3, warmup = 1, quotaFactor = 0.25).run()
      val summary = s"${run.deepCopy().without("trace")}, ${run.path("trace").size} trace lines"
      assert(run.path("completed").asBoolean(), summary)
      assert(run.path("lost").asLong() == 0 && run.path("duplicates").asLong() == 0, summary)
      val trace = run.path("trace").elements().asScala.toSeq
      val firstThrottled = trace.indexWhere(_.path("throttled").asInt() > 0)
      assert(firstThrottled >= 0, s"the shards never throttled: the test would prove nothing. $summary")
      assert(trace.drop(firstThrottled + 1).exists(_.path("pauseMs").asLong() > 0), s"no pacing after throttling: $summary")
      info(f"${run.path("deliveredRecordsPerSecond").asDouble()}%.0f records/s, " +
        f"${run.path("fractionOfAchievable").asDouble()}%.2f of the quota, ${run.path("throttledFraction").asDouble()}%.3f throttled")
    }
  }

  test("a throttled hot shard is paced on its own: a cold shard's records are all stored while the hot one is still busy") {
    val stream = TestKinesis.freshName("hot-cold")
    simulatorKinesis.createStream(stream, 2)
    val Seq(hot, cold) = simulatorKinesis.shardIds(stream).sorted
    // 50 records/s per shard: the hot shard's 500 records take ~9 s, the cold shard's 100 about one second.
    simulator.admin.quotas(enabled = true, factor = 0.05)
    val coldKey = BigInteger.ONE.shiftLeft(127).add(BigInteger.ONE).toString
    // One task; every sixth row, interleaved, goes to the cold shard (by explicit hash key). Keys belong to one
    // shard each, as real keys do: a hot record held back holds back the later records of its key.
    val cold_? = col("id") % 6 === 0
    val df = spark.range(0, 600, 1, 1).select(
      concat(when(cold_?, lit("c")).otherwise(lit("h")), (col("id") % 20).cast("string")).as("partitionKey"),
      concat(lit("r"), col("id").cast("string")).as("data"),
      when(cold_?, lit(coldKey)).otherwise(lit("1")).as("explicitHashKey"))
    val writing = Future {
      df.write.format("kinesis").mode(SaveMode.Append).options(Map(
        "streamName" -> stream, "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region,
        "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey)).save()
    }(ExecutionContext.global)
    def stored(shard: String) = simulator.admin.shardCounter(stream, shard, "putRecords")
    try {
      Wait.until("the cold shard's 100 records stored", Duration.ofSeconds(60)) {
        writing.value.foreach(_.get) // a write that failed fails the test with its own error
        stored(cold) >= 100
      }
      val hotThen = stored(hot)
      assert(simulator.admin.shardCounter(stream, hot, "throttledPutRecords") > 0, "the hot shard never throttled")
      // Paced as one stream, the cold shard would get a sixth of the writer's pace and finish with the hot one.
      assert(hotThen < 300, s"the hot shard had stored $hotThen of 500 when the cold one finished")
      Await.result(writing, 90.seconds)
    } finally simulator.admin.quotas(enabled = false)
    val ids = StreamContents.read(simulatorKinesis.client, stream).map(_.text)
    assert(ids.sorted == (0 until 600).map(i => s"r$i").sorted, "every record stored exactly once")
    simulator.admin.quotas(enabled = true)
  }
}
