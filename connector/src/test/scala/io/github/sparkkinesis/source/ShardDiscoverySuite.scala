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
}
