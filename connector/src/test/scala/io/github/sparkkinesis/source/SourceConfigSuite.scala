package io.github.sparkkinesis.source

import io.github.sparkkinesis.options.{KinesisOptionException, OptionReader}
import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite

class SourceConfigSuite extends AnyFunSuite {
  private def config(kv: (String, String)*) = SourceConfig(OptionReader(kv.toMap + ("streamName" -> kv.toMap.getOrElse("streamName", "s"))))

  test("defaults follow the option table") {
    val c = config()
    assert(c.initialPosition == InitialPosition.Latest)
    assert(c.maxRecordsPerFetch == 10000 && c.shardsPerTask.isEmpty && c.shardsPerTaskFor(8, 2) == 4 && c.shardsPerTaskFor(3, 4) == 1 && c.failOnDataLoss)
    assert(c.minFetchPeriod.toMillis == 200 && c.maxFetchDuration.toSeconds == 10 && c.shardFetchInterval.toSeconds == 1)
  }

  test("initial positions: names, timestamps and per-shard JSON") {
    assert(config("initialPosition" -> "earliest").initialPosition == InitialPosition.TrimHorizon)
    assert(config("initialPosition" -> "at_timestamp", "initialTimestamp" -> "2025-01-31T12:00:00Z").initialPosition ==
      InitialPosition.AtTimestamp(1738324800000L))
    assert(config("initialPosition" -> "at_timestamp", "initialTimestamp" -> "1738324800000").initialPosition ==
      InitialPosition.AtTimestamp(1738324800000L))
    val json = """{"shardId-0":{"at_sequence_number":"100","sub":2},"shardId-1":{"after_sequence_number":"200"}}"""
    assert(config("initialPosition" -> json).initialPosition == InitialPosition.PerShard(Map(
      ShardKey("s", "shardId-0") -> After("100", 1), ShardKey("s", "shardId-1") -> After("200", Long.MaxValue))))
    val twoStreams = """{"a":{"shardId-0":{"after_sequence_number":"5","sub":0}}}"""
    assert(config("streamName" -> "a,b", "initialPosition" -> twoStreams).initialPosition ==
      InitialPosition.PerShard(Map(ShardKey("a", "shardId-0") -> After("5", 0))))
  }

  test("bad source values name the option and what is accepted") {
    def error(kv: (String, String)*) = intercept[KinesisOptionException](config(kv: _*)).getMessage
    assert(error("initialTimestamp" -> "x", "initialPosition" -> "at_timestamp").contains("'initialTimestamp'"))
    assert(error("initialPosition" -> """{"shardId-0":{"at_sequence_number":"abc"}}""").contains("strings of digits"))
    assert(error("maxFetchRate" -> "5").contains("at most 2 (the per-shard read quota)"))
    assert(error("shardsPerTask" -> "0").contains("'shardsPerTask': expected an integer in 1..10000"))
  }
}
