package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite

/** What a planned batch reads in each shard: from its start to a record or the shard's end, nothing else. */
class ShardRangeSuite extends AnyFunSuite {
  private val key = ShardKey("s", "shardId-000000000000")

  test("a batch reads a shard up to a record it fetched, or to the shard's end") {
    assert(ShardRange.planned(key, TrimHorizon, After("5", 0), None).contains(ShardRange(key, TrimHorizon, After("5", 0))))
    assert(ShardRange.planned(key, After("5", 0), ShardEnd, None).exists(_.to == ShardEnd))
    assert(ShardRange.planned(key, After("5", 0), After("5", 0), None).isEmpty, "nothing new")
  }

  test("an end the batch did not fetch (trim horizon, a timestamp) is no range, even from another start") {
    // A pinned `latest` lost from the checkpoint and made anew: the logged end holds the old timestamp.
    assert(ShardRange.planned(key, AtTimestamp(2000L), AtTimestamp(1000L), None).isEmpty)
    assert(ShardRange.planned(key, AtTimestamp(2000L), TrimHorizon, None).isEmpty)
  }
}
