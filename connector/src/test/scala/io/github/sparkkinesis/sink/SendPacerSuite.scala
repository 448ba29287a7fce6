package io.github.sparkkinesis.sink

import java.math.BigInteger
import java.util

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequestEntry, PutRecordsResultEntry}

/** The pacer's decisions in virtual time, against a two-shard map: what may go, what waits, who hears what. */
class SendPacerSuite extends AnyFunSuite {
  private val Ms = 1000000L
  private val Half = BigInteger.ONE.shiftLeft(127)
  private val twoShards = ShardMap(Seq("s0" -> BigInteger.ZERO, "s1" -> Half))
  private val Throttled = "ProvisionedThroughputExceededException"

  /** A record for shard 0 or 1 (by explicit hash key), tagged so a test can follow it. */
  private def record(key: String, shard: Int, tag: String): PendingRecord = {
    val hash = if (shard == 0) BigInteger.ONE else Half.add(BigInteger.ONE)
    new PendingRecord(PutRecordsRequestEntry.builder().partitionKey(key).explicitHashKey(hash.toString)
      .data(SdkBytes.fromUtf8String(tag)).build(), key, 100)
  }

  private def tags(records: util.List[PendingRecord]): Seq[String] = records.asScala.map(_.entry.data().asUtf8String()).toSeq
  private def shardOf(r: PendingRecord): String = if (new BigInteger(r.entry.explicitHashKey()).compareTo(Half) < 0) "s0" else "s1"

  /** Kinesis's answer: records for the shards in `refuse` come back throttled, the others stored in their shard. */
  private def results(out: Outgoing, refuse: Set[String] = Set.empty): util.List[PutRecordsResultEntry] =
    out.records.asScala.map { r =>
      if (refuse(shardOf(r))) PutRecordsResultEntry.builder().errorCode(Throttled).errorMessage("slow down").build()
      else PutRecordsResultEntry.builder().shardId(shardOf(r)).sequenceNumber("1").build()
    }.asJava

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
    val first = pacer.take(queue((0 until 200).map(i => record(s"k$i", i % 2, s"w$i")): _*), Long.MaxValue, 0L, backlog = false)
    pacer.onResponse(first, results(first), 100 * Ms)
    val second = pacer.take(queue(record("a", 0, "x0"), record("b", 1, "x1")), Long.MaxValue, 100 * Ms, backlog = false)
    pacer.onResponse(second, results(second, refuse = Set("s0")), 100 * Ms)
  }

  test("while nothing is paced, requests come from the head of the queue and no record's shard is computed") {
    val pacer = adaptive()
    val records = (0 until 600).map(i => record(s"k$i", i % 2, s"r$i"))
    val out = pacer.take(queue(records: _*), Long.MaxValue, 0L, backlog = false)
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
    val first = pacer.take(lane, Long.MaxValue, 200 * Ms, backlog = false)
    val shard0 = tags(first.records).filter(t => t.drop(1).toInt < 300)
    assert(shard0.nonEmpty && shard0.size < 300, s"s0 sends one allotment (~0.1 s of its rate): ${shard0.size}")
    assert(shard0 == (0 until shard0.size).map(i => s"r$i"), "in queue order")
    assert(tags(first.records).filter(_.drop(1).toInt >= 300) == (300 until 400).map(i => s"r$i"),
      "every s1 record goes in the same request, unpaced")
    assert(first.pauseNanos > 50 * Ms && first.pauseNanos < 200 * Ms, s"s0 waits ~0.1 s: ${first.pauseNanos / Ms} ms")

    assert(pacer.take(lane, Long.MaxValue, 200 * Ms, backlog = false) == null, "only paced s0 records are left: none may go yet")
    assert(pacer.wakeAtNanos == 200 * Ms + first.pauseNanos)
    assert(pacer.mayGoNow(record("new", 1, "n1"), 200 * Ms), "an s1 record may go at once")
    assert(!pacer.mayGoNow(record("new", 0, "n0"), 200 * Ms))
    val next = pacer.take(lane, Long.MaxValue, pacer.wakeAtNanos, backlog = false)
    assert(tags(next.records).head == s"r${shard0.size}", "s0 resumes where it stopped")
  }

  test("a record held back for its paced shard holds back every later record of its key, whatever their shard") {
    val pacer = adaptive()
    throttleShard0(pacer)
    val fill = pacer.take(queue((0 until 300).map(i => record("filler", 0, s"f$i")): _*), Long.MaxValue, 200 * Ms, backlog = false)
    assert(fill.records.size < 300, "s0's allotment used up")
    val lane = queue(record("x", 0, "x1"), record("x", 1, "x2"), record("y", 1, "y1"))
    assert(tags(pacer.take(lane, Long.MaxValue, 200 * Ms, backlog = false).records) == Seq("y1"), "x2 must not overtake x1")
  }

  test("each shard's controller hears only its own records: s1's clean responses do not speed up s0") {
    val pacer = adaptive()
    throttleShard0(pacer)
    val before = pacer.traceFields
    (1 to 50).foreach { i =>
      val out = pacer.take(queue((0 until 100).map(j => record(s"k$j", 1, s"c$j")): _*), Long.MaxValue, (200 + i) * Ms, backlog = false)
      pacer.onResponse(out, results(out), (201 + i) * Ms)
    }
    assert(pacer.traceFields == before, "s1's traffic changed s0's pace")
    assert(pacer.pacedCount == 1)
  }

  test("ladder, aimd and off pace the stream as a whole, as does adaptive without a shard map") {
    for (mode <- Seq(FlowControlMode.Ladder, FlowControlMode.Aimd, FlowControlMode.Off)) {
      assert(!new SendPacer(mode, 500, 2, _ => Some(twoShards), 0L).perShard, mode)
    }
    val pacer = adaptive(map = None)
    assert(!pacer.perShard)
    throttleShard0(pacer)
    val lane = queue((0 until 400).map(i => record(s"k$i", if (i < 300) 0 else 1, s"r$i")): _*)
    val first = pacer.take(lane, Long.MaxValue, 200 * Ms, backlog = false)
    assert(first.records.size < 400)
    assert(pacer.take(lane, Long.MaxValue, 200 * Ms, backlog = false) == null, "one pace for both shards: s1 waits too")
  }

  test("the ladder, paced as a whole, sends its batch then waits its pause") {
    val pacer = new SendPacer(FlowControlMode.Ladder, 500, 2, _ => None, 0L)
    val first = pacer.take(queue(record("a", 0, "a")), Long.MaxValue, 0L, backlog = false)
    pacer.onResponse(first, results(first, refuse = Set("s0")), 10 * Ms)
    val lane = queue((0 until 500).map(i => record(s"k$i", i % 2, s"r$i")): _*)
    val out = pacer.take(lane, Long.MaxValue, 10 * Ms, backlog = false)
    assert(out.records.size == 250 && out.pauseNanos == 100 * Ms, "level 1: half the batch, 100 ms")
    // The pace keeps to its schedule (begun at 0) when a send comes less than a pause late.
    assert(pacer.take(lane, Long.MaxValue, 50 * Ms, backlog = false) == null && pacer.wakeAtNanos == 100 * Ms)
    assert(pacer.take(lane, Long.MaxValue, 100 * Ms, backlog = false).records.size == 250)
  }

  test("a record stored in a shard the map does not know (a reshard) makes the pacer list the shards again") {
    var stale = 0
    val pacer = new SendPacer(FlowControlMode.Adaptive, 500, 2, s => { if (s) stale += 1; Some(twoShards) }, 0L)
    val out = pacer.take(queue(record("a", 0, "a")), Long.MaxValue, 6000 * Ms, backlog = false)
    val unknown = List(PutRecordsResultEntry.builder().shardId("s2").sequenceNumber("1").build()).asJava
    pacer.onResponse(out, unknown, 6001 * Ms)
    assert(stale == 1)
    pacer.onResponse(out, unknown, 6002 * Ms)
    assert(stale == 1, "at most once per 5 s")
  }
}
