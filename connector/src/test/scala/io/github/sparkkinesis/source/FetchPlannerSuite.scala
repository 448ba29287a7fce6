package io.github.sparkkinesis.source

import org.apache.spark.sql.connector.read.streaming.{ReadLimit, ReadMinRows}
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.{FetchPlanner, TriggerLimits}

class FetchPlannerSuite extends AnyFunSuite {
  private val space = FetchPlanner.HashSpace
  private def shard(i: Int) = ShardKey("s", f"shardId-$i%012d")

  test("tasks own contiguous parts of the hash space; a split's children stay in their parent's part") {
    // Four equal shards, two per task: parts [0, 1/2) and [1/2, 1).
    val starts = Map(shard(0) -> BigInt(0), shard(1) -> space / 4, shard(2) -> space / 2, shard(3) -> space * 3 / 4)
    val groups = FetchPlanner.taskGroups(starts.keys.toSeq, 2)(identity, starts)
    assert(groups == Seq(Seq(shard(0), shard(1)), Seq(shard(2), shard(3))))
    // One shard per task; shard 1 ([1/4, 1/2)) splits into 4 and 5. Five parts of a fifth each: both children
    // fall in the part where their parent was.
    val afterSplit = starts - shard(1) ++ Map(shard(4) -> space / 4, shard(5) -> space * 3 / 8)
    assert(FetchPlanner.taskGroups(starts.keys.toSeq, 1)(identity, starts)(1) == Seq(shard(1)))
    val regrouped = FetchPlanner.taskGroups(afterSplit.keys.toSeq, 1)(identity, afterSplit)
    assert(regrouped == Seq(Seq(shard(0)), Seq(shard(4), shard(5)), Seq(shard(2)), Seq(shard(3))))
  }

  test("one shard per task by default, in hash order, and streams never share a task") {
    val starts = Map(shard(0) -> BigInt(0), shard(1) -> space / 2, ShardKey("t", "shardId-000000000000") -> BigInt(0))
    val groups = FetchPlanner.taskGroups(starts.keys.toSeq, 1)(identity, starts)
    assert(groups == Seq(Seq(shard(0)), Seq(shard(1)), Seq(ShardKey("t", "shardId-000000000000"))))
  }

  test("a trigger's read limit is read as its maxima and minimum; all-available lifts every limit") {
    assert(FetchPlanner.limitsOf(ReadLimit.maxRows(100)) == TriggerLimits(Some(100L), None, None))
    val min = ReadLimit.minRows(5, 1000).asInstanceOf[ReadMinRows]
    assert(FetchPlanner.limitsOf(ReadLimit.compositeLimit(Array(ReadLimit.maxRows(10), min))) ==
      TriggerLimits(Some(10L), None, Some(min)))
    assert(FetchPlanner.limitsOf(ReadLimit.compositeLimit(Array(ReadLimit.maxRows(10), ReadLimit.allAvailable()))) ==
      TriggerLimits(None, None, None))
    assert(FetchPlanner.limitsOf(ReadLimit.allAvailable()) == TriggerLimits(None, None, None))
    // Byte limits (Spark 4 only): SparkLineSourceSuite.
  }
}
