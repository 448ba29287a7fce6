package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.CallCounts
import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.SourceProgress
import io.github.sparkkinesis.source.executor.FeedState

/** Call counts in progress reports: idle snapshots add up until a batch reports them, then counting starts over. */
class SourceProgressSuite extends AnyFunSuite {
  private val key = ShardKey("s", "shardId-000000000000")
  private def snapshot(advanced: Boolean) = ShardSnapshot(
    key,
    TrimHorizon,
    FeedState(if (advanced) After("5", 0) else TrimHorizon, if (advanced) 5 else 0, 50, Some(0), caughtUp = true, 0),
    "exec-1")
  private def stats(calls: Long, throttled: Long) =
    ExecutorStats("exec-1", CallCounts(calls, throttled, throttled, 0), 0, 0, 100)

  test("calls made while idle are reported with the next batch, not lost between progress reports") {
    val p = new SourceProgress("polling", 1)
    def reported(k: String) = p.metrics(Map.empty)(k).toLong
    p.record(Seq(snapshot(advanced = true)), Seq(stats(calls = 10, throttled = 0)))
    assert(reported("kinesisCalls") == 10)
    p.record(Seq(snapshot(advanced = false)), Seq(stats(calls = 14, throttled = 2)))
    p.record(Seq(snapshot(advanced = false)), Seq(stats(calls = 20, throttled = 3)))
    assert(reported("kinesisCalls") == 10 && reported("throttledCalls") == 3, "both idle snapshots count")
    p.record(Seq(snapshot(advanced = true)), Seq(stats(calls = 21, throttled = 3)))
    assert(reported("kinesisCalls") == 11 && reported("numAwsRateLimitErrors") == 3, "the batch carries them")
    p.record(Seq(snapshot(advanced = true)), Seq(stats(calls = 25, throttled = 3)))
    assert(reported("kinesisCalls") == 4 && reported("throttledCalls") == 0, "after a batch, counting starts over")
  }

  test("metrics are counted again for a new listing, and not recounted while neither listing nor snapshot changes") {
    val p = new SourceProgress("polling", 1)
    p.record(Seq(snapshot(advanced = true)), Seq(stats(calls = 10, throttled = 0)))
    val open = Map(key -> ShardMeta(key, Nil, BigInt(0), closed = false))
    val closed = Map(key -> ShardMeta(key, Nil, BigInt(0), closed = true))
    assert(p.metrics(open)("numClosedShards") == "0")
    assert(p.metrics(closed)("numClosedShards") == "1", "a renewed listing is counted")
    assert(p.metrics(closed) eq p.metrics(closed), "the same listing and snapshot: the same report")
    p.record(Seq(snapshot(advanced = false)), Seq(stats(calls = 12, throttled = 0)))
    assert(p.metrics(closed)("kinesisCalls") == "2", "a snapshot recounts")
  }

  test("shards left out of a snapshot as quiet count as 0 ms behind") {
    val p = new SourceProgress("polling", 1)
    def lagging(ms: Long) = snapshot(advanced = true).copy(state =
      FeedState(After("5", 0), 5, 50, Some(ms), caughtUp = false, 0))
    p.record(Seq(lagging(4000), lagging(2000)), Seq(stats(calls = 1, throttled = 0)), quiet = 4)
    val m = p.metrics(Map.empty)
    assert((m("avgMsBehindLatest"), m("minMsBehindLatest"), m("maxMsBehindLatest")) == (("1000", "0", "4000")))
    p.record(Seq(lagging(4000), lagging(2000)), Seq(stats(calls = 2, throttled = 0)))
    assert(p.metrics(Map.empty)("minMsBehindLatest") == "2000")
    p.record(Nil, Seq(stats(calls = 3, throttled = 0)), quiet = 3)
    assert(p.metrics(Map.empty)("maxMsBehindLatest") == "0")
  }

  test("KPL aggregates not split are counted since the query started, per executor without double counting") {
    val p = new SourceProgress("polling", 1)
    def seen(exec: String, misplaced: Long, malformed: Long) =
      ExecutorStats(exec, CallCounts(1, 0, 0, 0), 0, 0, 100, aggregates = AggregateCounts(misplaced, malformed))
    p.record(Seq(snapshot(advanced = true)), Seq(seen("exec-1", 2, 1), seen("exec-1", 2, 1), seen("exec-2", 1, 0)))
    def metric(name: String) = p.metrics(Map.empty)(name)
    assert(
      metric("numMisplacedAggregatesSkipped") == "3" && metric("numMalformedAggregates") == "1",
      "two tasks of one executor report its counts once")
    p.record(Seq(snapshot(advanced = true)), Seq(seen("exec-1", 2, 3), seen("exec-2", 4, 0)))
    assert(metric("numMisplacedAggregatesSkipped") == "6" && metric("numMalformedAggregates") == "3")
  }

  test("mode and numStreams, as Databricks reports them, from the options: before any snapshot too") {
    def config(options: Map[String, String]) = SourceConfig(io.github.sparkkinesis.options.OptionReader(
      Map("streamName" -> "a, b", "region" -> "eu-west-1") ++ options))
    val polling = config(Map.empty)
    val efo = config(Map("consumerMode" -> "EFO"))
    val p = new SourceProgress(SourceProgress.modeOf(polling), polling.streams.size)
    assert(p.metrics(Map.empty)("mode") == "polling" && p.metrics(Map.empty)("numStreams") == "2")
    assert(new SourceProgress(SourceProgress.modeOf(efo), efo.streams.size).metrics(Map.empty)("mode") == "efo")
  }
}
