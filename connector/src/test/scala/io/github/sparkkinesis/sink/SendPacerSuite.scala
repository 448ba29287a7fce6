package io.github.sparkkinesis.sink

import java.math.BigInteger
import java.util

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequestEntry, PutRecordsResultEntry}
import io.github.sparkkinesis.sink.executor.{
  FlowController,
  Outgoing,
  PendingRecord,
  RateFlowController,
  RecordBatcher,
  SendPacer,
  ShardMap,
  ShardPace,
  ShardPaces
}

/** The pacer's decisions in virtual time, against a two-shard map: what may go, what waits, who hears what. */
class SendPacerSuite extends AnyFunSuite {
  private val Ms = 1000000L
  private val Half = BigInteger.ONE.shiftLeft(127)
  private val twoShards = ShardMap(Seq("s0" -> BigInteger.ZERO, "s1" -> Half))
  private val Throttled = "ProvisionedThroughputExceededException"

  /** A record for shard 0 or 1 (by explicit hash key), tagged so a test can follow it. */
  private def record(key: String, shard: Int, tag: String): PendingRecord = {
    val hash = if (shard == 0) BigInteger.ONE else Half.add(BigInteger.ONE)
    new PendingRecord(
      PutRecordsRequestEntry.builder().partitionKey(key).explicitHashKey(hash.toString)
        .data(SdkBytes.fromUtf8String(tag)).build(),
      key,
      100)
  }

  private def tags(records: util.List[PendingRecord]): Seq[String] =
    records.asScala.map(_.entry.data().asUtf8String()).toSeq
  private def shardOf(r: PendingRecord): String =
    if (new BigInteger(r.entry.explicitHashKey()).compareTo(Half) < 0) "s0" else "s1"

  /** Kinesis's answer: records for the shards in `refuse` come back throttled, the others stored in their shard. */
  private def results(out: Outgoing, refuse: Set[String] = Set.empty): util.List[PutRecordsResultEntry] =
    out.records.asScala.map { r =>
      if (refuse(shardOf(r))) PutRecordsResultEntry.builder().errorCode(Throttled).errorMessage("slow down").build()
      else PutRecordsResultEntry.builder().shardId(shardOf(r)).sequenceNumber("1").build()
    }.asJava

  private def take(pacer: SendPacer, now: Long, lanes: RecordBatcher*): Outgoing =
    pacer.take(lanes.toArray, Long.MaxValue, now)

  private def queue(records: PendingRecord*): RecordBatcher = {
    val b = new RecordBatcher(distinctKeys = false)
    records.foreach(b.add)
    b
  }

  private def adaptive(map: Option[ShardMap] = Some(twoShards)) =
    new SendPacer(FlowControlMode.Adaptive, 500, 2, _ => map, 0L)

  /**
   * Shard s0 throttles once: 100 records per shard stored in the first 100 ms, then a response at 100 ms with s0's
   * records refused. s0 is then paced at about 900 units/s (90 % of what it stored), s1 not at all.
   */
  private def throttleShard0(pacer: SendPacer): Unit = {
    val first = take(pacer, 0L, queue((0 until 200).map(i => record(s"k$i", i % 2, s"w$i")): _*))
    pacer.onResponse(first, results(first), 100 * Ms)
    val second = take(pacer, 100 * Ms, queue(record("a", 0, "x0"), record("b", 1, "x1")))
    pacer.onResponse(second, results(second, refuse = Set("s0")), 100 * Ms)
  }

  test("while nothing is paced, requests come from the head of the queue and no record's shard is computed") {
    val pacer = adaptive()
    val records = (0 until 600).map(i => record(s"k$i", i % 2, s"r$i"))
    val out = take(pacer, 0L, queue(records: _*))
    assert(tags(out.records) == (0 until 500).map(i => s"r$i"))
    assert(out.pauseNanos == 0 && out.fullBatch && out.allowedBatch == 500)
    assert(records.forall(_.group == null), "no MD5 or lookup per record before the first throttling")
    assert(pacer.perShard && pacer.pacedCount == 0)
  }

  test("a throttled shard is paced on its own: the other shard's records go at once, the paced shard's wait in order") {
    val pacer = adaptive()
    throttleShard0(pacer)
    assert(pacer.pacedCount == 1, pacer.traceFields)
    val lane = queue((0 until 400).map(i => record(s"k$i", if (i < 300) 0 else 1, s"r$i")): _*)
    val first = take(pacer, 200 * Ms, lane)
    val shard0 = tags(first.records).filter(t => t.drop(1).toInt < 300)
    assert(shard0.nonEmpty && shard0.size < 300, s"s0 sends one allotment (~0.1 s of its rate): ${shard0.size}")
    assert(shard0 == (0 until shard0.size).map(i => s"r$i"), "in queue order")
    assert(
      tags(first.records).filter(_.drop(1).toInt >= 300) == (300 until 400).map(i => s"r$i"),
      "every s1 record goes in the same request, unpaced")
    assert(first.pauseNanos > 50 * Ms && first.pauseNanos < 200 * Ms, s"s0 waits ~0.1 s: ${first.pauseNanos / Ms} ms")

    assert(take(pacer, 200 * Ms, lane) == null, "only paced s0 records are left: none may go yet")
    assert(pacer.wakeAtNanos == 200 * Ms + first.pauseNanos)
    assert(pacer.wakeFor(record("new", 0, "n0"), 200 * Ms) == pacer.wakeAtNanos, "an s0 record waits for s0's turn")
    val next = take(pacer, pacer.wakeAtNanos, lane)
    assert(tags(next.records).head == s"r${shard0.size}", "s0 resumes where it stopped")
  }

  test("while a shard is paced, a few records of unpaced shards gather for up to 100 ms instead of going one by one") {
    val pacer = adaptive()
    throttleShard0(pacer)
    val lane = queue(record("a", 1, "a1"), record("b", 1, "b1"))
    assert(take(pacer, 200 * Ms, lane) == null)
    assert(pacer.wakeAtNanos == 200 * Ms + SendPacer.LingerNanos)
    assert(
      pacer.wakeFor(record("c", 1, "c1"), 210 * Ms) == 210 * Ms + SendPacer.LingerNanos,
      "an unpaced record waits at most the linger, not for a paced shard's turn")
    lane.add(record("c", 1, "c1"))
    assert(take(pacer, 250 * Ms, lane) == null, "still gathering")
    assert(tags(take(pacer, 300 * Ms, lane).records) == Seq("a1", "b1", "c1"), "in order, once the wait is over")
    val many = queue((0 until 100).map(i => record(s"k$i", 1, s"m$i")): _*)
    assert(take(pacer, 300 * Ms, many).records.size == 100, "a fifth of a request goes at once")
    val withPaced = queue(record("x", 1, "x1"), record("y", 0, "y1"))
    assert(
      tags(take(pacer, 300 * Ms, withPaced).records) == Seq("x1", "y1"),
      "unpaced records ride along with a paced shard's turn")
  }

  test("while pacing, one request gathers a shard's allotment from several lanes, the byte cap counted across them") {
    val pacer = adaptive()
    throttleShard0(pacer)
    val a = queue((0 until 30).map(i => record(s"a$i", 0, s"a$i")): _*)
    val b = queue((0 until 300).map(i => record(s"b$i", 0, s"b$i")): _*)
    val out = take(pacer, 200 * Ms, a, b)
    assert(out.drawn.toSeq == Seq(true, true) && a.isEmpty)
    assert(out.records.size > 30 && out.records.size < 330, s"one allotment (~90 records): ${out.records.size}")
    val capped = pacer.take(Array(queue(record("c", 0, "c1")), queue(record("d", 0, "d1"))), 150, 400 * Ms)
    assert(
      tags(capped.records) == Seq("c1") && capped.drawn.toSeq == Seq(true, false),
      "100 + 100 bytes do not fit in 150: the second lane's first record waits")
  }

  test("a record held back for its paced shard holds back every later record of its key, whatever their shard") {
    val pacer = adaptive()
    throttleShard0(pacer)
    val fill = take(pacer, 200 * Ms, queue((0 until 300).map(i => record("filler", 0, s"f$i")): _*))
    assert(fill.records.size < 300, "s0's allotment used up")
    // A hundred other records, so the unpaced ones go at once rather than gather.
    val others = (0 until 100).map(i => record(s"y$i", 1, s"y$i"))
    val lane = queue(Seq(record("x", 0, "x1"), record("x", 1, "x2")) ++ others: _*)
    assert(tags(take(pacer, 200 * Ms, lane).records) == others.map(_.partitionKey), "x2 must not overtake x1")
  }

  test("each shard's controller hears only its own records: s1's clean responses do not speed up s0") {
    val pacer = adaptive()
    throttleShard0(pacer)
    val before = pacer.traceFields
    (1 to 50).foreach { i =>
      val out = take(pacer, (200 + i) * Ms, queue((0 until 100).map(j => record(s"k$j", 1, s"c$j")): _*))
      pacer.onResponse(out, results(out), (201 + i) * Ms)
    }
    assert(pacer.traceFields == before, "s1's traffic changed s0's pace")
    assert(pacer.pacedCount == 1)
  }

  test("writers of one JVM share a shard's pace: one's throttling paces the other, and the shard's turns alternate") {
    val jvm = new ShardPaces(() => FlowController(FlowControlMode.Adaptive, 500, 1))
    val a = new SendPacer(FlowControlMode.Adaptive, 500, 2, _ => Some(twoShards), 0L, jvm)
    val b = new SendPacer(FlowControlMode.Adaptive, 500, 2, _ => Some(twoShards), 0L, jvm)
    throttleShard0(a)
    assert(a.pacedCount == 1 && b.pacedCount == 1 && b.gated, "b never sent, yet s0 is paced for it too")
    val laneA = queue((0 until 300).map(i => record(s"a$i", 0, s"a$i")): _*)
    val laneB = queue((0 until 300).map(i => record(s"b$i", 0, s"b$i")): _*)
    val first = take(a, 200 * Ms, laneA)
    assert(first != null && first.records.size < 300, "a takes s0's turn")
    assert(take(b, 200 * Ms, laneB) == null, "the turn is spent: b waits")
    val next = b.wakeAtNanos
    assert(next == 200 * Ms + first.pauseNanos, "b waits for s0's next turn, not one of its own")
    assert(take(a, next, laneA) == null, "a took the last turn and b waits: a leaves this one to b")
    assert(a.wakeAtNanos == next + ShardPace.YieldNanos)
    val byB = take(b, next, laneB)
    assert(tags(byB.records).head == "b0", "b takes it")
    val after = next + byB.pauseNanos
    assert(take(a, next + Ms, laneA) == null, "a waits for the next turn")
    assert(take(b, after, laneB) == null, "b took the last turn and a waits: b leaves this one to a")
    val byA = take(a, after, laneA)
    assert(byA != null, "a takes it")
    assert(take(a, after + byA.pauseNanos, laneA) != null, "a turn nobody waits for goes to the last taker at once")
  }

  test("a shared pace no writer used for 10 s starts unpaced again when a writer starts; one in use stays paced") {
    val jvm = new ShardPaces(() => FlowController(FlowControlMode.Adaptive, 500, 1))
    throttleShard0(new SendPacer(FlowControlMode.Adaptive, 500, 2, _ => Some(twoShards), 0L, jvm))
    assert(jvm.forgetIdle(5000 * Ms).pacedCount == 1, "5 s after its last answer: still paced")
    val next = new SendPacer(FlowControlMode.Adaptive, 500, 2, _ => Some(twoShards), 0L, jvm)
    assert(jvm.forgetIdle(10100 * Ms).pacedCount == 0 && !next.gated, "10 s after: a new task starts unpaced")
  }

  test("paces that start at a share of the quota gate the first request: each shard sends its allotment, no burst") {
    val jvm = new ShardPaces((share: Option[Double]) => RateFlowController(500, 1, share)).startingAt(Some(0.5))
    val pacer = new SendPacer(FlowControlMode.Adaptive, 500, 2, _ => Some(twoShards), 0L, jvm)
    assert(pacer.gated && pacer.pacedCount == 2, "both shards paced before any answer")
    val first = take(pacer, 0L, queue((0 until 600).map(i => record(s"k$i", i % 2, s"r$i")): _*))
    assert(first.records.size == 100, "0.1 s of 500 units/s for each of the two shards, not 500 records at once")
    assert(first.pauseNanos == 100 * Ms)
    assert(jvm.forgetIdle(20000 * Ms).pacedCount == 2, "an idle pace starts again at the share: still paced")
  }

  test("ladder, aimd and off pace the stream as a whole, as does adaptive without a shard map") {
    for (mode <- Seq(FlowControlMode.Ladder, FlowControlMode.Aimd, FlowControlMode.Off)) {
      assert(!new SendPacer(mode, 500, 2, _ => Some(twoShards), 0L).perShard, mode)
    }
    val pacer = adaptive(map = None)
    assert(!pacer.perShard)
    throttleShard0(pacer)
    val lane = queue((0 until 400).map(i => record(s"k$i", if (i < 300) 0 else 1, s"r$i")): _*)
    val first = take(pacer, 200 * Ms, lane)
    assert(first.records.size < 400)
    assert(take(pacer, 200 * Ms, lane) == null, "one pace for both shards: s1 waits too")
  }

  test("the ladder, paced as a whole, sends its batch then waits its pause") {
    val pacer = new SendPacer(FlowControlMode.Ladder, 500, 2, _ => None, 0L)
    val first = take(pacer, 0L, queue(record("a", 0, "a")))
    pacer.onResponse(first, results(first, refuse = Set("s0")), 10 * Ms)
    val lane = queue((0 until 500).map(i => record(s"k$i", i % 2, s"r$i")): _*)
    val out = take(pacer, 10 * Ms, lane)
    assert(out.records.size == 250 && out.pauseNanos == 100 * Ms, "level 1: half the batch, 100 ms")
    // The pace keeps to its schedule (begun at 0) when a send comes less than a pause late.
    assert(take(pacer, 50 * Ms, lane) == null && pacer.wakeAtNanos == 100 * Ms)
    assert(take(pacer, 100 * Ms, lane).records.size == 250)
  }

  test("a record stored in a shard the map does not know (a reshard) makes the pacer list the shards again") {
    var stale = 0
    val pacer = new SendPacer(FlowControlMode.Adaptive, 500, 2, s => { if (s) stale += 1; Some(twoShards) }, 0L)
    val out = take(pacer, 6000 * Ms, queue(record("a", 0, "a")))
    val unknown = List(PutRecordsResultEntry.builder().shardId("s2").sequenceNumber("1").build()).asJava
    pacer.onResponse(out, unknown, 6001 * Ms)
    assert(stale == 1)
    pacer.onResponse(out, unknown, 6002 * Ms)
    assert(stale == 1, "at most once per 5 s")
  }
}
