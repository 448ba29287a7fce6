package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import io.github.sparkkinesis.source.executor.FeedState
import org.scalatest.funsuite.AnyFunSuite

/** A snapshot task's requests as bytes ([[SnapshotRequests]]) and its quiet shards ([[ShardSnapshot.withQuiet]]). */
class SnapshotRequestsSuite extends AnyFunSuite {
  private def key(stream: String, i: Int) = ShardKey(stream, f"shardId-$i%012d")

  test("requests read back as written: every position, hash range edges, two streams, closed shards") {
    val requests = Vector(
      SnapshotRequest(key("a", 0), After("49590338271490256608559692538361571095921575989136588898", 3), 10, 20),
      SnapshotRequest(
        key("a", 1),
        AtTimestamp(1700000000123L),
        Long.MaxValue,
        Long.MaxValue,
        Some(HashKeySpan(BigInt(0), HashKeySpan.MaxHashKey)),
        closed = true),
      SnapshotRequest(key("b", 2), TrimHorizon, 0, 1, Some(HashKeySpan(BigInt(2).pow(127), BigInt(2).pow(127) + 1))),
      SnapshotRequest(key("a", 3), ShardEnd, 5, 6),
      SnapshotRequest(ShardKey("ströme", "shardId-000000000004"), After("1", 0), 1, 1)
    )
    assert(SnapshotRequests.decode(SnapshotRequests.encode(requests)) == requests)
    assert(SnapshotRequests.decode(SnapshotRequests.encode(Nil)).isEmpty)
  }

  test("a task's quiet shards are left out of its result and put back as they were, in the requests' order") {
    val requests = (0 until 4).map(i => SnapshotRequest(key("a", i), After(s"${i + 1}", 0), 100, 1000))
    val quiet = requests.map(ShardSnapshot.quiet(_, "executor_1"))
    val busy = ShardSnapshot(
      key("a", 2),
      After("3", 0),
      FeedState(After("9", 0), 6, 60, Some(0L), caughtUp = true, 60),
      "executor_1",
      Some(After("9", 0)))
    assert(ShardSnapshot.withQuiet(requests, Seq(busy), "executor_1") == quiet.updated(2, busy))
    assert(ShardSnapshot.withQuiet(requests, Nil, "executor_1") == quiet)
    assert(quiet.forall(s => !s.advanced && s.state.caughtUp && s.heldTo.contains(s.from)))
  }

  test("a snapshot task's wait looks at thousands of feeds at most a tenth of the time, at a few at once") {
    val ms = 1000000L
    assert(SnapshotJob.nextLook(0L, ms / 100) == ms / 100, "a short look: the next as soon as anything changes")
    assert(SnapshotJob.nextLook(5 * ms, 6 * ms) == 15 * ms, "a look of 1 ms: the next 10 ms after its start")
  }
}
