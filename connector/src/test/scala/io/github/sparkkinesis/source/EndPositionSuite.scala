package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.KinesisClockBound
import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite

/** Where a bounded read ends: per shard, the named position or the tip, whichever comes first; or before a time. */
class EndPositionSuite extends AnyFunSuite {
  private val a = ShardKey("s", "shardId-0")
  private val b = ShardKey("s", "shardId-1")
  private val ends = EndPosition.PerShard(Map(a -> After("500", Long.MaxValue), b -> After("700", -1)))

  test("a named shard ends at its position or where the read reached, whichever comes first") {
    assert(ends.clip(a, After("900", 0)) == After("500", Long.MaxValue), "read past the end: cut back to it")
    assert(ends.clip(a, After("400", 0)) == After("400", 0), "the tip before the end: the tip")
    assert(
      ends.clip(a, ShardEnd) == After("500", Long.MaxValue),
      "a closed shard read to its end: cut, so its " +
        "children stay unread")
    assert(ends.clip(b, After("700", 0)) == After("700", -1), "at_sequence_number: that record is not read")
    assert(ends.clip(b, After("700", -1)) == After("700", -1))
    assert(ends.clip(ShardKey("s", "shardId-2"), After("9", 0)) == After("9", 0), "a shard not named: its tip")
    assert(EndPosition.PerShard(Map(a -> TrimHorizon)).clip(a, After("1", 0)) == TrimHorizon, "nothing of it")
  }

  test("an end time bounds a run before the first record at or after it, or sooner at the start's bound") {
    val clock = new KinesisClockBound
    assert(RunEnd.startedAt(10000L, clock, Some(EndPosition.AtTimestamp(5000L))) == RunEnd(Some(4999L)))
    assert(RunEnd.startedAt(10000L, clock, Some(EndPosition.Latest)) == RunEnd.startedAt(10000L, clock, None))
  }
}
