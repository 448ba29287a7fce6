package io.github.sparkkinesis.source

import scala.collection.mutable

import io.github.sparkkinesis.client.CallTally
import io.github.sparkkinesis.options.OptionReader
import io.github.sparkkinesis.source.ShardPosition._
import io.github.sparkkinesis.source.driver.SentGroups
import io.github.sparkkinesis.source.executor.{PollingFetcher, ShardFeed, StandingGroups}
import org.scalatest.funsuite.AnyFunSuite

/**
 * A trigger sends a snapshot task only the requests that changed ([[SentGroups]] on the driver); the executor
 * puts them together with what it holds ([[StandingGroups]]), or says it does not hold the generation asked about.
 */
class StandingGroupsSuite extends AnyFunSuite {
  private val config = SourceConfig(OptionReader(Map("streamName" -> "s")))
  private def key(i: Int) = ShardKey("s", f"shardId-$i%012d")
  private def request(i: Int, seq: Int) = SnapshotRequest(key(i), After(s"$seq", 0), Long.MaxValue, Long.MaxValue)

  /** Feeds as an executor makes them, counted. */
  private final class Executor(val sourceId: String) {
    val made = mutable.Buffer.empty[SnapshotRequest]
    var keptCount = 0
    def run(ask: SnapshotAsk): Option[Vector[(SnapshotRequest, ShardFeed)]] =
      StandingGroups.resolve(sourceId, SnapshotRequests.decodeAsk(SnapshotRequests.encodeAsk(ask)))(
        r => {
          made += r
          new ShardFeed(
            sourceId,
            r.key,
            r.from,
            config,
            None,
            false,
            new PollingFetcher(null, config, r.key, r.from, new CallTally, None))
        },
        kept => keptCount += kept.size
      )
  }

  test("the first ask is full; the next sends only the moved shards, and the executor reuses the other feeds") {
    val sent = new SentGroups
    val exec = new Executor("src-1")
    val first = (0 until 5).map(request(_, 1))
    val ask1 = sent.asks(Seq(first)).head
    assert(ask1.full && ask1.changed.map(_._2) == first)
    val feeds1 = exec.run(ask1).get
    assert(feeds1.map(_._1) == first && exec.made == first)
    sent.answered(ask1, first)

    val second = first.updated(3, request(3, 7))
    val ask2 = sent.asks(Seq(second)).head
    assert(ask2.base.contains(ask1.generation) && ask2.changed == Seq(3 -> request(3, 7)))
    exec.made.clear()
    val feeds2 = exec.run(ask2).get
    assert(feeds2.map(_._1) == second, "the group's requests put together as the driver has them")
    assert(exec.made == Seq(request(3, 7)), "only the moved shard's feed is looked up")
    assert(exec.keptCount == 4)
    assert((0 until 5).filter(_ != 3).forall(i => feeds2(i)._2 eq feeds1(i)._2), "the other feeds are the same ones")
    sent.answered(ask2, second)

    val ask3 = sent.asks(Seq(second)).head
    assert(!ask3.full && ask3.changed.isEmpty, "nothing moved: nothing sent")
    StandingGroups.release("src-1")
  }

  test("an executor without the generation asked about answers nothing; a full ask then sets it up") {
    val sent = new SentGroups
    val first = (0 until 3).map(request(_, 1))
    val ask1 = sent.asks(Seq(first)).head
    val here = new Executor("src-2")
    here.run(ask1).get
    sent.answered(ask1, first)
    val ask2 = sent.asks(Seq(first.updated(0, request(0, 2)))).head
    // The task lands where the group is not held (another executor, or this one after it dropped the group):
    // no answer, no feed made.
    StandingGroups.release("src-2")
    here.made.clear()
    assert(here.run(ask2).isEmpty)
    assert(here.made.isEmpty)
    val again = sent.full(0, first.updated(0, request(0, 2)))
    assert(again.full && again.generation > ask2.generation)
    assert(here.run(again).get.map(_._1) == first.updated(0, request(0, 2)))
    sent.answered(again, first.updated(0, request(0, 2)))
    // A task retried after its group moved on: its base is not what the executor holds.
    assert(here.run(ask2).isEmpty)
    StandingGroups.release("src-2")
  }

  test("a group whose shards changed, or after a failed job, is sent in full") {
    val sent = new SentGroups
    val first = (0 until 3).map(request(_, 1))
    sent.answered(sent.asks(Seq(first)).head, first)
    assert(sent.asks(Seq(first :+ request(3, 1))).head.full, "a shard added")
    sent.answered(sent.asks(Seq(first)).head, first)
    assert(sent.asks(Seq(Seq(request(0, 1), request(2, 1), request(1, 1)))).head.full, "another order")
    sent.answered(sent.asks(Seq(first)).head, first)
    assert(!sent.asks(Seq(first)).head.full)
    sent.reset()
    assert(sent.asks(Seq(first)).head.full)
  }

  test("a stopped feed kept by a group is made again; a released source's groups are gone") {
    val sent = new SentGroups
    val exec = new Executor("src-3")
    val first = (0 until 2).map(request(_, 1))
    val ask1 = sent.asks(Seq(first)).head
    val feeds = exec.run(ask1).get
    sent.answered(ask1, first)
    feeds(1)._2.stopped = true // dropped as abandoned meanwhile
    exec.made.clear()
    val again = exec.run(sent.asks(Seq(first)).head).get
    assert(exec.made == Seq(request(1, 1)))
    assert(!again(1)._2.stopped && (again(0)._2 eq feeds(0)._2))
    val before = StandingGroups.size
    StandingGroups.release("src-3")
    assert(StandingGroups.size == before - 1)
  }

  test("asks read back as written, full and changed-only") {
    val full = SnapshotAsk.full(4, 17L, (0 until 3).map(request(_, 5)))
    assert(SnapshotRequests.decodeAsk(SnapshotRequests.encodeAsk(full)) == full)
    val changed = SnapshotAsk(2, 18L, Some(17L), 300, Vector(7 -> request(7, 9), 299 -> request(299, 1)))
    assert(SnapshotRequests.decodeAsk(SnapshotRequests.encodeAsk(changed)) == changed)
    val none = SnapshotAsk(0, 19L, Some(18L), 3, Vector.empty)
    assert(SnapshotRequests.decodeAsk(SnapshotRequests.encodeAsk(none)) == none)
  }
}
