package io.github.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite

class ShardDiscoverySuite extends AnyFunSuite {
  private def meta(i: Int, closed: Boolean = false) =
    ShardMeta(ShardKey("s", f"shardId-$i%012d"), Nil, BigInt(i) << 120, closed)

  test("a relisting equal to the listing before is that same listing, so what was worked out from it holds") {
    val before = Vector(meta(0), meta(1))
    assert(ShardDiscovery.same(Some(before), Vector(meta(0), meta(1))) eq before)
    // A shard closed or added is a new listing.
    val closed = Vector(meta(0), meta(1, closed = true))
    assert(ShardDiscovery.same(Some(before), closed) eq closed)
    val added = before :+ meta(2)
    assert(ShardDiscovery.same(Some(before), added) eq added)
    val first = Vector(meta(0))
    assert(ShardDiscovery.same(None, first) eq first)
  }

  test("a listing's newest shard is the one with the greatest id: the shards created after it are resharding's") {
    assert(ShardDiscovery.Listing(Vector(meta(2), meta(10), meta(9)), 0L).newest.contains("shardId-000000000010"))
    assert(ShardDiscovery.Listing(Vector.empty, 0L).newest.isEmpty)
  }
}
