package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import io.github.sparkkinesis.source.driver.{SentGroups, StandingRequests}
import org.scalatest.funsuite.AnyFunSuite

/** A stream's snapshot requests between triggers: only the shards the last batch moved get new ones. */
class StandingRequestsSuite extends AnyFunSuite {
  private def key(i: Int) = ShardKey("s", f"shardId-$i%012d")
  private val shards = (0 until 6).map(i => key(i) -> ShardMeta(key(i), Nil, BigInt(i) << 120, closed = i == 5)).toMap
  private val groups = Seq(Seq(key(0), key(1), key(2)) -> Some("exec-1"), Seq(key(3), key(4), key(5)) -> None)
  private val start = KinesisSourceOffset((0 until 6).map(i => key(i) -> (After(s"$i", 0): ShardPosition)).toMap)
  private def built(from: KinesisSourceOffset, perShard: Long = 100L) = groups.map(_._1.map(k =>
    SnapshotRequest.of(shards, k, from.get(k).getOrElse(TrimHorizon), perShard, Long.MaxValue)))

  test("the same start: the very requests of the trigger before") {
    val s = new StandingRequests
    val first = s.of(groups, shards, start, 100L, None)
    assert(first == built(start))
    assert(s.of(groups, shards, start, 100L, None) eq first)
  }

  test("from where the last batch ended: new requests for the shards it moved, the others kept as they were") {
    val s = new StandingRequests
    val first = s.of(groups, shards, start, 100L, None)
    val end = start.movedBy(Seq(key(1) -> After("11", 0)))
    val next = s.of(groups, shards, end, 100L, Some((start, end, Set(key(1)))))
    assert(next == built(end))
    assert(next(1) eq first(1), "a group none of whose shards moved")
    assert((next(0)(0) eq first(0)(0)) && (next(0)(2) eq first(0)(2)) && !(next(0)(1) eq first(0)(1)))
    assert(SentGroups.changes(first(1), next(1)).contains(Vector.empty))
    assert(SentGroups.changes(first(0), next(0)).contains(Vector(1 -> next(0)(1))))
  }

  test("any other start, listing, grouping or cap: built again") {
    val s = new StandingRequests
    s.of(groups, shards, start, 100L, None)
    val other = start.movedBy(Seq(key(1) -> After("11", 0), key(4) -> After("44", 0)))
    val end = start.movedBy(Seq(key(1) -> After("11", 0)))
    assert(s.of(groups, shards, other, 100L, Some((start, end, Set(key(1))))) == built(other), "not the batch's end")
    val relisted = shards + (key(0) -> shards(key(0)).copy(closed = true))
    assert(s.of(groups, relisted, other, 100L, None).head.head.closed, "a new listing")
    val regrouped = Seq(groups.head._1 -> None, groups(1))
    assert(s.of(regrouped, shards, other, 7L, None) == built(other, perShard = 7L), "new groups, another cap")
  }
}
