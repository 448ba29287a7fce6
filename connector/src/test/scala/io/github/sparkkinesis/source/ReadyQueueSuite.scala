package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.executor.{Prefetcher, ReadyQueue}
import org.scalatest.funsuite.AnyFunSuite

/** How many call slots an executor has, and who gets the next: calls likely to bring records before the idle budget's polls. */
class ReadyQueueSuite extends AnyFunSuite {

  private def drain(q: ReadyQueue[String]): Seq[String] = Iterator.continually(q.poll()).takeWhile(_ != null).toSeq

  test("with one kind waiting, first come first served") {
    val q = new ReadyQueue[String](4)
    Seq("a", "b", "c").foreach(q.add(_, idlePoll = false))
    assert(drain(q) == Seq("a", "b", "c"))
    Seq("x", "y").foreach(q.add(_, idlePoll = true))
    assert(drain(q) == Seq("x", "y"))
    assert(q.isEmpty && q.poll() == null)
  }

  test("a burst of idle polls queued first takes one start in four while reads wait") {
    val q = new ReadyQueue[String](4)
    (1 to 6).foreach(i => q.add(s"idle$i", idlePoll = true))
    (1 to 6).foreach(i => q.add(s"read$i", idlePoll = false))
    assert(q.size == 12 && q.idleSize == 6)
    assert(drain(q) == Seq("read1", "read2", "read3", "idle1", "read4", "read5", "read6", "idle2") ++
      (3 to 6).map(i => s"idle$i"))
  }

  test("one put back (no room for its call yet) is next again, and the idle polls' turn is kept") {
    val q = new ReadyQueue[String](2)
    Seq("read1", "read2").foreach(q.add(_, idlePoll = false))
    q.add("idle", idlePoll = true)
    assert(q.poll() == "read1")
    val turn = q.poll()
    assert(turn == "idle")
    q.putBack(turn, idlePoll = true)
    assert(q.poll() == "idle", "put back after its turn came: it keeps the turn")
    assert(q.poll() == "read2" && q.isEmpty)
  }

  test("idle polls are not starved by an endless stream of reads") {
    val q = new ReadyQueue[String](4)
    q.add("idle", idlePoll = true)
    val started = Iterator.continually { q.add("read", idlePoll = false); q.poll() }.take(8).toSeq
    assert(started.indexOf("idle") == 3, started)
  }

  test("a feed that waited already (for buffer space) goes back to the front of its queue") {
    val q = new ReadyQueue[String](4)
    q.add("r1", idlePoll = false)
    q.add("r0", idlePoll = false, first = true)
    q.add("i1", idlePoll = true)
    q.add("i0", idlePoll = true, first = true)
    assert(drain(q) == Seq("r0", "r1", "i0", "i1"))
  }

  test("call slots follow the shards read here, within the client's share of connections") {
    assert(Prefetcher.callSlots(0) == 32 && Prefetcher.callSlots(2560) == 32, "a few thousand shards: 32")
    assert(Prefetcher.callSlots(5000) == 62 && Prefetcher.callSlots(10000) == 125)
    assert(Prefetcher.callSlots(20000) == 128 && Prefetcher.callSlots(Int.MaxValue) == 128)
  }
}
