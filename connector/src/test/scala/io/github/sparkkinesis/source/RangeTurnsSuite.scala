package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.executor.{RangeTurns, RecordBlock, UserRecord}
import org.scalatest.funsuite.AnyFunSuite

/** A one-read batch task's ranges taken in turns: the order of its rows, whatever blocks GetRecords returned. */
class RangeTurnsSuite extends AnyFunSuite {

  /** Range `r`'s records r-1 .. r-n, cut into blocks of the given sizes (the rest in one last block). */
  private def blocks(r: Int, n: Int, cuts: Seq[Int]): Iterator[RecordBlock] = {
    val records = (1 to n).map(i => UserRecord("k", Array[Byte](1), s"${r * 1000 + i}", 0L, 0L))
    val sizes = cuts.scanLeft(0)(_ + _).takeWhile(_ < n) :+ n
    sizes.sliding(2).collect { case Seq(a, b) if b > a => RecordBlock.of(records.slice(a, b)) } ++
      Iterator(RecordBlock.empty) // an empty answer (a tip) along the way changes nothing
  }

  private def order(turns: RangeTurns): Seq[String] =
    turns.flatMap { case (i, b) => (0 until b.size).map(j => s"$i:${b.sequenceNumber(j)}") }.toSeq

  test("turns of a fixed number of records, whatever blocks the ranges came in") {
    val noParents = IndexedSeq(Nil, Nil, Nil)
    val sizes = Seq(7, 3, 5)
    def read(cuts: Seq[Int]) = order(new RangeTurns(noParents, r => blocks(r, sizes(r), cuts), turn = 2, window = 64))
    val oneBlock = read(Nil)
    assert(oneBlock.take(6) == Seq("0:1", "0:2", "1:1001", "1:1002", "2:2001", "2:2002"))
    assert(oneBlock.size == 15)
    // Each range in its own order, every record once.
    for (r <- 0 to 2)
      assert(oneBlock.filter(_.startsWith(s"$r:")) == (1 to sizes(r)).map(i => s"$r:${r * 1000 + i}"))
    assert(read(Seq(1, 1, 1, 1)) == oneBlock)
    assert(read(Seq(3, 4)) == oneBlock)
  }

  test("a child comes after all of its parents in the task, and takes turns from then on") {
    // 0 and 1 merge into 2; 3 is unrelated; 2 splits into 4 and 5.
    val parents = IndexedSeq(Nil, Nil, Seq(0, 1), Nil, Seq(2), Seq(2))
    val sizes = Seq(2, 4, 3, 6, 2, 2)
    val rows = order(new RangeTurns(parents, r => blocks(r, sizes(r), Seq(1)), turn = 1, window = 64))
    def lastOf(r: Int) = rows.lastIndexWhere(_.startsWith(s"$r:"))
    def firstOf(r: Int) = rows.indexWhere(_.startsWith(s"$r:"))
    assert(rows.size == sizes.sum)
    assert(firstOf(2) > lastOf(0) && firstOf(2) > lastOf(1))
    assert(firstOf(4) > lastOf(2) && firstOf(5) > lastOf(2))
    // The unrelated shard does not wait for the lineage: it takes turns from the first.
    assert(firstOf(3) == 2)
    assert(firstOf(3) < lastOf(0))
  }

  test("at most `window` ranges take turns at once; the next one joins as one is exhausted") {
    val rows = order(new RangeTurns(IndexedSeq.fill(3)(Nil), r => blocks(r, 2, Nil), turn = 1, window = 2))
    assert(rows == Seq("0:1", "1:1001", "0:2", "1:1002", "2:2001", "2:2002"))
  }

  test("ranges with nothing in them end the task") {
    assert(order(new RangeTurns(IndexedSeq(Nil, Nil), _ => Iterator.empty, turn = 3, window = 4)).isEmpty)
  }
}
