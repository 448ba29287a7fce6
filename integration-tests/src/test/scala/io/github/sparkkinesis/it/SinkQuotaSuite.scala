package io.github.sparkkinesis.it

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.it.bench.{SinkQuotaBench, SinkQuotaRun}
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
}
