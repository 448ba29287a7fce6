package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.FetchPlanner

/** Which shards an offset keeps across resharding and expiry ([[FetchPlanner.nextOffset]]). */
class OffsetPruningSuite extends AnyFunSuite {
  private def key(i: Int) = ShardKey("s", f"shardId-$i%012d")
  private def meta(i: Int, parents: Int*) =
    key(i) -> ShardMeta(key(i), parents.map(p => key(p).shardId), BigInt(0), closed = false)
  private def offset(ps: (ShardKey, ShardPosition)*) = KinesisSourceOffset(ps.toMap)

  test("listed shards the offset lacks are added at their trim horizon; ended shards no longer listed are dropped") {
    val start = offset(key(0) -> ShardEnd, key(1) -> After("7", 0))
    val listed = Map(meta(1), meta(2, 0), meta(3, 0))
    val end = FetchPlanner.nextOffset(start, Seq(key(1) -> After("9", 0)), listed)
    assert(end == offset(key(1) -> After("9", 0), key(2) -> TrimHorizon, key(3) -> TrimHorizon))
  }

  test("a shard the batch reads is kept even if it stopped being listed meanwhile") {
    val start = offset(key(0) -> After("7", 0))
    val end = FetchPlanner.nextOffset(start, Seq(key(0) -> ShardEnd), Map(meta(1, 0)))
    assert(end == offset(key(0) -> ShardEnd, key(1) -> TrimHorizon))
    assert(FetchPlanner.expiredUnread(end, Map(meta(1, 0))).isEmpty)
    assert(FetchPlanner.nextOffset(end, Nil, Map(meta(1, 0))) == offset(key(1) -> TrimHorizon))
  }

  test("an offset already holding the listed shards moves on in place, and keeps their JSON order") {
    val listed = Map(meta(2), meta(10), meta(1))
    val start = offset(key(10) -> TrimHorizon, key(1) -> After("7", 0), key(2) -> AtTimestamp(5))
    start.json // sorts the shards
    val end = FetchPlanner.nextOffset(start, Seq(key(10) -> After("3", 0)), listed)
    assert(end == offset(key(10) -> After("3", 0), key(1) -> After("7", 0), key(2) -> AtTimestamp(5)))
    assert(end.json == KinesisSourceOffset(end.positions).json, "the order taken from the start is the sorted one")
    assert(end.json.indexOf(key(1).shardId) < end.json.indexOf(key(2).shardId))
    assert(end.json.indexOf(key(2).shardId) < end.json.indexOf(key(10).shardId))
    assert(FetchPlanner.sameShards(end, listed) && !FetchPlanner.sameShards(end, listed - key(2)))
    // A shard added: sorted again, never the start's order.
    val grown = start.movedBy(Seq(key(0) -> TrimHorizon))
    assert(grown.json.indexOf(key(0).shardId) < grown.json.indexOf(key(1).shardId))
    assert(grown.json == KinesisSourceOffset(grown.positions).json)
  }

  test("what a moved offset keeps from its start (ended shards, streams, the listing it holds) stays true") {
    val listed = Map(meta(0), meta(1), meta(2))
    val start = offset(key(0) -> ShardEnd, key(1) -> After("7", 0), key(2) -> TrimHorizon)
    assert(start.ended == Set(key(0)) && FetchPlanner.sameShards(start, listed))
    val end = FetchPlanner.nextOffset(start, Seq(key(1) -> ShardEnd, key(2) -> After("4", 0)), listed)
    assert(end.ended == Set(key(0), key(1)) && end.ended == KinesisSourceOffset(end.positions).ended)
    assert(end.streams == Set("s") && FetchPlanner.sameShards(end, listed))
    assert(!FetchPlanner.sameShards(end, listed - key(2)), "another listing is checked, not taken from the start")
    val grown = end.movedBy(Seq(key(3) -> TrimHorizon))
    assert(!FetchPlanner.sameShards(grown, listed), "a shard added: the start's listing is not this one's")
    assert(grown.ended == Set(key(0), key(1)))
  }

  test("shards gone from the listing before their end are the expired-unread ones") {
    val start = offset(key(0) -> After("7", 0), key(1) -> TrimHorizon, key(2) -> ShardEnd, key(3) -> AtTimestamp(5))
    assert(FetchPlanner.expiredUnread(start, Map(meta(3))) == Seq(key(0) -> After("7", 0), key(1) -> TrimHorizon))
  }

  test("200 reshards: the offset holds what is listed, not every shard the stream ever had") {
    // Shard n splits into n+1 and n+2, which merge into n+3, and so on; closed shards stay listed for 10 steps.
    var offsetNow = offset(key(0) -> After("1", 0))
    var listed = Map(meta(0))
    var next = 1
    var open = Seq(0)
    val closedAt = scala.collection.mutable.Map.empty[Int, Int]
    for (step <- 1 to 200) {
      val children = if (open.size == 1) Seq(next, next + 1) else Seq(next)
      children.foreach(c => listed += meta(c, open: _*))
      open.foreach(closedAt(_) = step)
      next += children.size
      // The batch reads the closed shards to their end.
      val advanced = open.map(key(_) -> (ShardEnd: ShardPosition))
      open = children
      listed = listed.filter { case (k, _) => closedAt.get(k.shardId.drop(8).toInt).forall(_ > step - 10) }
      offsetNow = FetchPlanner.nextOffset(offsetNow, advanced, listed)
      assert(FetchPlanner.expiredUnread(offsetNow, listed).isEmpty)
    }
    assert(next > 290)
    assert(offsetNow.positions.size <= listed.size + 2, offsetNow.positions.keys)
  }
}
