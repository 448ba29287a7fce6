package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.driver.BatchShares
import io.github.sparkkinesis.source.driver.BatchShares.{Ready, Share}
import org.scalatest.funsuite.AnyFunSuite

class BatchSharesSuite extends AnyFunSuite {
  private def records(ready: Long*) = ready.map(r => Ready(r, r * 100)).toIndexedSeq

  test("a skewed backlog: the hot shard gets what idle shards leave, so the batch fills to the maximum") {
    val shares = BatchShares.of(records(10000, 0, 0, 0, 0, 0, 0, 0), Some(1000), None)
    assert(shares.map(_.records) == Seq(1000, 0, 0, 0, 0, 0, 0, 0))
    // Two busy shards beside idle ones: in proportion to their backlogs.
    assert(BatchShares.of(records(3000, 0, 1000, 0), Some(400), None).map(_.records) == Seq(300, 0, 100, 0))
  }

  test("an even backlog is shared evenly; the last records left by rounding go to the largest remainders") {
    assert(BatchShares.of(records(500, 500, 500, 500), Some(100), None).map(_.records) == Seq(25, 25, 25, 25))
    assert(BatchShares.of(records(500, 500, 500), Some(100), None).map(_.records) == Seq(34, 33, 33))
    // Fewer records admitted than shards: some shards take none, never more than the limit in all.
    assert(BatchShares.of(records(10, 10, 10, 10), Some(3), None).map(_.records).sum == 3)
  }

  test("a shard never gets more than it has ready or its own cap; what a cap leaves goes to the others") {
    assert(BatchShares.of(records(50, 5000), Some(1000), None).map(_.records) == Seq(10, 990))
    // maxRecordsPerShardPerTrigger caps the hot shard; its unused share goes to the cold one.
    assert(BatchShares.of(records(5000, 500), Some(1000), None, Some(600)).map(_.records) == Seq(600, 400))
    // Less ready than the limit: every shard takes all it has.
    val ready = records(7, 0, 3)
    val all = BatchShares.of(ready, Some(1000), Some(1L << 20))
    assert(all == Seq(Share(7, 700), Share(0, 0), Share(3, 300)) && all.zip(ready).forall { case (s, r) =>
      s.takesAll(r)
    })
  }

  test("bytes are shared in proportion to the bytes each shard has ready") {
    val shares = BatchShares.of(IndexedSeq(Ready(100, 30000), Ready(100, 10000), Ready(0, 0)), None, Some(8000))
    assert(shares.map(_.bytes) == Seq(6000, 2000, 0))
    assert(shares.map(_.records) == Seq(100, 100, 0), "no record limit: bytes alone cut")
  }

  test("whatever the backlog, the shares fill the limit exactly and never pass it nor a shard's backlog") {
    val random = new scala.util.Random(51)
    for (_ <- 1 to 500) {
      val ready = IndexedSeq.fill(1 + random.nextInt(12)) {
        if (random.nextInt(3) == 0) 0L else random.nextInt(if (random.nextBoolean()) 20 else 20000).toLong
      }
      val limit = 1L + random.nextInt(30000)
      val cap = if (random.nextBoolean()) Some(1L + random.nextInt(5000)) else None
      val shares = BatchShares.of(records(ready: _*), Some(limit), None, cap).map(_.records)
      val caps = ready.map(r => cap.fold(r)(math.min(_, r)))
      assert(shares.sum == math.min(limit, caps.sum), s"$ready, limit $limit, cap $cap: $shares")
      assert(shares.zip(caps).forall { case (s, c) => s >= 0 && s <= c }, s"$ready, limit $limit, cap $cap: $shares")
    }
  }
}
