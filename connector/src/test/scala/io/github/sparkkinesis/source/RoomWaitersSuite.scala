package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.executor.RoomWaiters
import org.scalatest.funsuite.AnyFunSuite

/** Feeds waiting for buffer space: who goes when room is freed, and how much of the line is looked at. */
class RoomWaitersSuite extends AnyFunSuite {

  private val polled = (_: String) => true

  test("the longest waiting go first, no more than the free call slots; a pushed feed takes none") {
    val w = new RoomWaiters[String]
    Seq("a", "push", "b", "c").foreach(w.add(_, anySize = true))
    assert(w.release(2, _ != "push", _ => true) == Seq("a", "push", "b"))
    assert(w.size == 1 && w.release(0, polled, _ => true).isEmpty)
    assert(w.release(5, polled, _ => true) == Seq("c") && w.isEmpty)
  }

  test("a shard behind its tip waiting for room for a useful answer holds back none of the others") {
    val w = new RoomWaiters[String]
    w.add("behind", anySize = false)
    w.add("quiet", anySize = true)
    assert(w.release(4, polled, _ == "quiet") == Seq("quiet"))
    assert(w.release(4, polled, _ => true) == Seq("behind"))
  }

  test("a few that do not fit are passed over (another query's buffer may differ)") {
    val w = new RoomWaiters[String]
    (1 to 3).foreach(i => w.add(s"small$i", anySize = true))
    w.add("large", anySize = true)
    assert(w.release(4, polled, _ == "large") == Seq("large"))
    assert(w.size == 3)
  }

  test("a release looks at a bounded part of the line however long it is") {
    val w = new RoomWaiters[String]
    (1 to 10000).foreach(i => w.add(s"f$i", anySize = i % 2 == 0))
    var looked = 0
    def fits(a: String) = { looked += 1; false }
    assert(w.release(128, polled, fits).isEmpty)
    assert(looked == 2 * RoomWaiters.PassedOverMax, "misfits end the look")
    looked = 0
    assert(w.release(3, polled, a => { looked += 1; true }) == Seq("f2", "f4", "f6"))
    assert(looked == 3, "released as many as can start, no more")
    assert(w.release(0, polled, _ => true).isEmpty && w.size == 9997)
  }
}
