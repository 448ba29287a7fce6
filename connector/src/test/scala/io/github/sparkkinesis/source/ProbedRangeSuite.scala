package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import io.github.sparkkinesis.source.driver.{KinesisBatch, ProbedEnd}
import io.github.sparkkinesis.source.executor.{RangeFetch, RecordBlock, UserRecord}
import org.scalatest.funsuite.AnyFunSuite

/** A batch read planned without reading: each shard's range from its probed end, and where a read of it stops. */
class ProbedRangeSuite extends AnyFunSuite {
  private val key = ShardKey("s", "shardId-000000000000")
  private val end = 1000L

  private def range(from: ShardPosition, probed: ProbedEnd, ending: Option[ShardPosition] = None) =
    KinesisBatch.probedRange(key, from, probed, end, ending, None)

  test("a probed record ends the range before it; a shard with none after the end time, at its tip; an ended shard at its end") {
    assert(range(TrimHorizon, ProbedEnd.Before("50")).map(r => (r.to, r.before, r.arrivedBy)).contains(
      (ShardEnd, Some("50"), None)))
    assert(range(TrimHorizon, ProbedEnd.ArrivedBy(end)).flatMap(_.arrivedBy).contains(end))
    assert(range(TrimHorizon, ProbedEnd.Ended).map(r => (r.to, r.before, r.arrivedBy)).contains((ShardEnd, None, None)))
  }

  test("nothing to read: a start at or past the probed record, a start time after the end time, an end at trim_horizon") {
    assert(range(After("50", 0), ProbedEnd.Before("50")).isEmpty)
    assert(range(After("60", 0), ProbedEnd.Before("50")).isEmpty)
    assert(range(After("40", 0), ProbedEnd.Before("50")).nonEmpty)
    assert(range(AtTimestamp(end + 1), ProbedEnd.ArrivedBy(end)).isEmpty)
    assert(range(AtTimestamp(end + 1), ProbedEnd.Before("50")).isEmpty)
    assert(range(AtTimestamp(end), ProbedEnd.ArrivedBy(end)).nonEmpty)
    assert(range(TrimHorizon, ProbedEnd.Ended, Some(TrimHorizon)).isEmpty)
  }

  test("a given end before the probed one wins, and the other way round") {
    assert(range(TrimHorizon, ProbedEnd.Before("50"), Some(After("40", Long.MaxValue)))
      .map(r => (r.to, r.before)).contains((After("40", Long.MaxValue), None)))
    assert(range(TrimHorizon, ProbedEnd.Before("50"), Some(After("60", Long.MaxValue)))
      .map(r => (r.to, r.before)).contains((ShardEnd, Some("50"))))
    // at_sequence_number of the probed record itself: the same records, either way.
    assert(range(TrimHorizon, ProbedEnd.Before("50"), Some(After("50", -1L))).map(_.to).contains(After("50", -1L)))
    assert(range(TrimHorizon, ProbedEnd.ArrivedBy(end), Some(After("40", 0L)))
      .map(r => (r.to, r.arrivedBy)).contains((After("40", 0L), Some(end))))
  }

  test("a read keeps the records before the probed record, up to the given end, arrived by the end time") {
    val block = RecordBlock.of((1 to 6).map(i => UserRecord("k", Array[Byte](1), s"${10 * i}", 0L, 990L + 5 * i)))
    val whole = ShardRange(key, TrimHorizon, ShardEnd, toIsRecord = false)
    assert(RangeFetch.inRange(block, whole) == 6)
    assert(RangeFetch.inRange(block, whole.copy(before = Some("40"))) == 3)
    assert(RangeFetch.inRange(block, whole.copy(before = Some("45"))) == 4)
    assert(RangeFetch.inRange(block, whole.copy(arrivedBy = Some(end))) == 2) // arrivals 995, 1000, 1005, ...
    assert(RangeFetch.inRange(block, whole.copy(to = After("20", 0L), before = Some("40"))) == 2)
  }
}
