package io.github.sparkkinesis.source
package executor

/**
 * A one-read batch task's ranges taken in turns: up to `turn` records from each readable range, in the partition's
 * order, then the next; a range is readable once its parents in the task are exhausted, and at most `window`
 * readable ranges take turns at once (the first ones in order). Every range is read at its shard's quota from the
 * start, so no range's backlog has to wait in `fetchBufferSize` while another is handed out (taken one after
 * another, a 16 x 32 MiB read reached 0.56 of the shards' quota at the default buffer). Turns count records, never
 * blocks (GetRecords decides a block's size), so a retried task gives the same rows in the same order.
 *
 * Yields (range index, records) until every range is exhausted.
 */
final class RangeTurns(parents: IndexedSeq[Seq[Int]], open: Int => Iterator[RecordBlock], turn: Int, window: Int)
  extends Iterator[(Int, RecordBlock)] {
  require(turn > 0 && window > 0)
  private val n = parents.size
  private val exhausted = new Array[Boolean](n)
  private val sources = new Array[Iterator[RecordBlock]](n)
  private val inHand = Array.fill(n)(RecordBlock.empty)
  private var current = -1
  private var left = 0
  private var pending: Option[(Int, RecordBlock)] = None

  private def readable(i: Int): Boolean = !exhausted(i) && parents(i).forall(exhausted(_))
  private def anyReadable: Boolean = Iterator.range(0, n).exists(readable(_))

  /** The range after `i` whose turn it is: the next of the first `window` readable ranges, wrapping; -1 if none. */
  private def after(i: Int): Int = {
    val takingTurns = Iterator.range(0, n).filter(readable(_)).take(window).toVector
    takingTurns.find(_ > i).orElse(takingTurns.headOption).getOrElse(-1)
  }

  override def hasNext: Boolean = {
    while (pending.isEmpty && (current >= 0 || anyReadable)) {
      if (current < 0 || left == 0 || exhausted(current)) {
        current = after(current)
        left = turn
      }
      if (current >= 0) takeFrom(current)
    }
    pending.nonEmpty
  }

  private def takeFrom(i: Int): Unit = {
    if (inHand(i).isEmpty) {
      if (sources(i) == null) sources(i) = open(i)
      val source = sources(i)
      while (inHand(i).isEmpty && source.hasNext) inHand(i) = source.next()
      if (inHand(i).isEmpty) {
        exhausted(i) = true
        return
      }
    }
    val k = math.min(left, inHand(i).size)
    pending = Some(i -> inHand(i).take(k))
    inHand(i) = inHand(i).drop(k)
    left -= k
  }

  override def next(): (Int, RecordBlock) = {
    if (!hasNext) throw new NoSuchElementException
    val out = pending.get
    pending = None
    out
  }
}
