package io.github.sparkkinesis.sink

import java.math.BigInteger
import java.util

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequestEntry, PutRecordsResultEntry}
import io.github.sparkkinesis.sink.executor.{
  FlowController,
  Outgoing,
  PendingRecord,
  RateFlowController,
  SendLanes,
  SendPacer,
  ShardMap,
  ShardPaces
}

/**
 * The flow controllers in closed loop with a model of Kinesis shards (token buckets holding one second of quota,
 * as AWS documents), in virtual time. This checks the control law, not Kinesis: the real quota measurements run
 * against the simulator in `make bench` (SinkQuotaBench).
 */
class FlowControlModelSuite extends AnyFunSuite {
  import FlowControlModelSuite._

  private def check(name: String, result: Result): Unit = {
    info(f"$name: ${result.fractionOfAchievable}%.3f of achievable, ${result.throttledFraction}%.3f throttled")
    assert(result.fractionOfAchievable >= 0.95, s"$name delivered too little: $result")
    assert(result.throttledFraction <= 0.05, s"$name: too many throttled attempts: $result")
  }

  test("adaptive: one shard, one writer: >= 95 % of the quota, <= 5 % throttled after warm-up") {
    check("1 shard x 1 writer", simulate(FlowControlMode.Adaptive, Seq(1.0), writers = 1))
  }

  test("adaptive: one shard shared by two writers") {
    check("1 shard x 2 writers", simulate(FlowControlMode.Adaptive, Seq(1.0), writers = 2))
  }

  test("adaptive: four and sixteen shards, two writers, uniform keys") {
    check("4 shards x 2 writers", simulate(FlowControlMode.Adaptive, Seq.fill(4)(0.25), writers = 2))
    check("16 shards x 2 writers", simulate(FlowControlMode.Adaptive, Seq.fill(16)(1.0 / 16), writers = 2))
  }

  test("adaptive: hot-key skew (40 % of the records on one of four shards): the hot shard runs at its quota") {
    check("4 shards, hot", simulate(FlowControlMode.Adaptive, Seq(0.4, 0.2, 0.2, 0.2), writers = 2))
  }

  test("adaptive: records of 4 KiB are paced by the byte quota") {
    check("1 shard x 1 writer, 4 KiB", simulate(FlowControlMode.Adaptive, Seq(1.0), writers = 1, unitsPerRecord = 4))
  }

  test("the writer's own pacing (SendPacer, lanes, buffer), per shard: 1, 4 and 16 shards, and a hot shard") {
    val runs = Seq(
      "1 shard x 2 writers" -> simulateWriter(Seq(1.0), writers = 2, perShard = true),
      "4 shards x 2 writers" -> simulateWriter(Seq.fill(4)(0.25), writers = 2, perShard = true),
      "16 shards x 2 writers" -> simulateWriter(Seq.fill(16)(1.0 / 16), writers = 2, perShard = true),
      "4 shards, hot" -> simulateWriter(Seq(0.4, 0.2, 0.2, 0.2), writers = 2, perShard = true)
    )
    runs.foreach { case (name, r) =>
      info(f"paced writer, $name: ${r.fractionOfAchievable}%.3f of achievable, ${r.throttledFraction}%.3f throttled")
      assert(r.fractionOfAchievable >= 0.95, s"$name delivered too little: $r")
      assert(r.throttledFraction <= 0.05, s"$name: too many throttled attempts: $r")
    }
  }

  test("the writer's own pacing with 48 KiB records (KPL aggregates): requests sized in write units, not records") {
    val runs = Seq(
      "1 shard x 1 writer" -> simulateWriter(Seq(1.0), writers = 1, perShard = true, recordBytes = 48 * 1024),
      "4 shards x 2 writers" -> simulateWriter(Seq.fill(4)(0.25), writers = 2, perShard = true, recordBytes = 48 * 1024)
    )
    runs.foreach { case (name, r) =>
      info(f"paced writer, 48 KiB, $name: ${r.fractionOfAchievable}%.3f of achievable, ${r.throttledFraction}%.3f throttled")
      assert(r.fractionOfAchievable >= 0.95, s"$name delivered too little: $r")
      assert(r.throttledFraction <= 0.05, s"$name: too many throttled attempts: $r")
    }
  }

  test("a batch write by two tasks of one executor: finite input, answers in any order, the simulator's quotas") {
    // What the traces of SinkQuotaBench and the aggregation bench showed and the shapes above missed: the task
    // that loses the race for a shard's first burst (or whose refused answer comes back first) measures almost
    // nothing and was paced from there, and two tasks pacing a shard apart keep whatever split they fell into.
    val hot = Seq(0.4, 0.2, 0.2, 0.2)
    val four = Seq.fill(4)(0.25)
    val runs = Seq(
      "1 shard" -> simulateBatch(Seq(1.0), 2, 20),
      "4 shards" -> simulateBatch(four, 2, 20),
      "16 shards" -> simulateBatch(Seq.fill(16)(1.0 / 16), 2, 20),
      "4 shards, hot" -> simulateBatch(hot, 2, 20),
      "4 shards, hot, the second task 300 ms late" -> simulateBatch(hot, 2, 20, startMs = 300),
      "4 shards, 50 KiB aggregates" -> simulateBatch(four, 2, 15, recordBytes = 50 * 1024, aggregates = true),
      "4 shards, 50 KiB aggregates, answers in order" ->
        simulateBatch(four, 2, 15, recordBytes = 50 * 1024, aggregates = true, jitterMs = 0)
    )
    runs.foreach { case (name, r) =>
      info(f"batch, 2 tasks, $name: ${r.fractionOfAchievable}%.3f of achievable, ${r.throttledFraction}%.3f throttled")
    }
    runs.foreach { case (name, r) =>
      assert(r.fractionOfAchievable >= 0.95, s"$name delivered too little: $r")
      assert(r.throttledFraction <= 0.05, s"$name: too many throttled attempts: $r")
    }
  }

  test("a batch write from several executors: each starts at its share of every shard, together they take one quota") {
    // What #52 measured on local-cluster[2,1,1024] with every executor unpaced until refused: 6.6-8.8 % of attempts
    // throttled, one executor 1.3-2.5 %. Each executor runs one task (local-cluster[N,1,1024]), each JVM paces the
    // shards apart; counted from the first send, the start included.
    val four = Seq.fill(4)(0.25)
    val shapes = Seq(
      ("4 shards", four, 200),
      ("16 shards", Seq.fill(16)(1.0 / 16), 200),
      ("4 shards, hot", Seq(0.4, 0.2, 0.2, 0.2), 200),
      ("4 shards, 50 KiB aggregates", four, 50 * 1024))
    def run(executors: Int, weights: Seq[Double], bytes: Int, share: Option[Double]) =
      simulateBatch(
        weights,
        executors,
        20,
        recordBytes = bytes,
        aggregates = bytes > 1024,
        executors = executors,
        startShare = share)
    val results = for (executors <- Seq(2, 3); (name, weights, bytes) <- shapes) yield {
      val share = driver.WriterShare.forExecutors(executors, executors)
      val (before, after) = (run(executors, weights, bytes, None), run(executors, weights, bytes, share))
      info(f"$executors executors, $name: unpaced start ${before.fractionOfAchievable}%.3f of achievable, " +
        f"${before.throttledFromFirstSend}%.3f throttled; at its share ${after.fractionOfAchievable}%.3f, " +
        f"${after.throttledFromFirstSend}%.3f")
      (s"$executors executors, $name", bytes, after)
    }
    results.foreach { case (name, bytes, r) =>
      // 0.950-1.008 of achievable at the constants chosen; neighbouring constants moved single shapes by +-0.05
      // either way (docs/design/sink-flow-control.md), hence the margin.
      assert(r.fractionOfAchievable >= 0.94, s"$name delivered too little: $r")
      // A refused 50 KiB aggregate is a whole request's worth: measured 6-9 %, see docs/design/sink-flow-control.md.
      val most = if (bytes > 1024) 0.10 else 0.05
      assert(r.throttledFromFirstSend <= most, s"$name: too many throttled attempts from the first send: $r")
    }
  }

  test("the seed ladder, for comparison, settles well below the quota") {
    val ladder = simulate(FlowControlMode.Ladder, Seq(1.0), writers = 1)
    info(f"ladder, 1 shard x 1 writer: ${ladder.fractionOfAchievable}%.3f of achievable, ${ladder.throttledFraction}%.3f throttled")
    assert(ladder.fractionOfAchievable < 0.9)
  }
}

object FlowControlModelSuite {
  /** `allAttempts` and `allThrottled` count from the first send (the start's burst included), where measured. */
  final case class Result(
      delivered: Long,
      achievable: Double,
      attempts: Long,
      throttled: Long,
      allAttempts: Long = 0,
      allThrottled: Long = 0) {
    def fractionOfAchievable: Double = delivered / achievable
    def throttledFraction: Double = if (attempts == 0) 0 else throttled.toDouble / attempts
    def throttledFromFirstSend: Double = if (allAttempts == 0) 0 else allThrottled.toDouble / allAttempts
  }

  private final class Bucket(rate: Double) {
    private var balance = rate
    def refill(ms: Double): Unit = balance = math.min(rate, balance + rate * ms / 1000)
    def take(units: Double): Boolean = if (balance >= units) { balance -= units; true }
    else false
  }

  private final class Request(val records: Seq[Int], val sentMs: Long, val units: Double, val full: Boolean)

  private final class Writer(val flow: FlowController) {
    val resend = mutable.Queue.empty[Int]
    var nextSendMs = 0.0
    var retryAtMs = 0L
    val inFlight = mutable.Queue.empty[(Long, Request, Seq[Boolean])]
  }

  /**
   * Writers with endless input send to shards whose record shares are `weights`; each writer keeps up to 4
   * requests in flight, responses take `latencyMs`, throttled records are resent after 100 ms. Counts after
   * `warmupS` seconds, against what the shards can take given the skew: the hottest shard's quota / its share.
   */
  def simulate(
      mode: FlowControlMode,
      weights: Seq[Double],
      writers: Int,
      seconds: Int = 30,
      warmupS: Int = 5,
      latencyMs: Int = 20,
      unitsPerRecord: Double = 1.0,
      controller: () => FlowController = null): Result = {
    val random = new Random(7)
    val buckets = weights.map(_ => new Bucket(1000))
    val cumulative = weights.scanLeft(0.0)(_ + _).tail
    def nextShard(): Int = { val x = random.nextDouble(); math.max(0, cumulative.indexWhere(x < _)) }
    val ws = Seq.fill(writers)(new Writer(
      if (controller != null) controller() else FlowController(mode, 500, weights.size)))
    var delivered, attempts, throttled = 0L
    for (t <- 0L until seconds * 1000L) {
      buckets.foreach(_.refill(1))
      val counting = t >= warmupS * 1000L
      for (w <- ws) {
        while (w.inFlight.nonEmpty && w.inFlight.head._1 <= t) {
          val (_, req, stored) = w.inFlight.dequeue()
          val refused = req.records.zip(stored).collect { case (shard, false) => shard }
          w.flow.onResponse(FlowController.Response(
            req.records.size,
            req.units,
            refused.size,
            req.sentMs * 1000000L,
            t * 1000000L,
            req.full))
          if (refused.nonEmpty) { refused.reverseIterator.foreach(w.resend.+=:); w.retryAtMs = t + 100 }
        }
        if (w.inFlight.size < 4 && t >= w.nextSendMs) {
          val size = w.flow.batchSize
          val fromResend = if (t >= w.retryAtMs) math.min(size, w.resend.size) else 0
          val records = Seq.fill(fromResend)(w.resend.dequeue()) ++ Seq.fill(size - fromResend)(nextShard())
          val stored = records.map(shard => buckets(shard).take(unitsPerRecord))
          if (counting) {
            attempts += records.size
            throttled += stored.count(!_)
            delivered += stored.count(identity)
          }
          val units = records.size * unitsPerRecord
          w.inFlight.enqueue((t + latencyMs, new Request(records, t, units, full = true), stored))
          val pauseMs = w.flow.pauseNanos(units) / 1e6
          w.nextSendMs = math.max(w.nextSendMs, t - pauseMs) + pauseMs
        }
      }
    }
    val achievable = (seconds - warmupS) * 1000.0 / unitsPerRecord / weights.max
    Result(delivered, achievable, attempts, throttled)
  }

  /**
   * A shard's write quota as the project's simulator (and AWS) keeps it: 1000 records and 1 MiB a second, each
   * bucket holding one second; a record takes one from the count bucket, then its bytes, and a record larger than
   * the byte bucket's burst passes only from a full bucket. A refused record costs neither.
   */
  private final class ShardQuota {
    private var records = 1000.0
    private var bytes = QuotaBytes
    def refill(ms: Double): Unit = {
      records = math.min(1000.0, records + ms)
      bytes = math.min(QuotaBytes, bytes + QuotaBytes * ms / 1000)
    }
    def take(size: Int): Boolean =
      if (records < 1) false
      else if (bytes >= size || (size > QuotaBytes && bytes >= QuotaBytes)) { records -= 1; bytes -= size; true }
      else false
  }
  private val QuotaBytes = 1024.0 * 1024

  /**
   * A batch write as Spark runs it: `writers` tasks with `recordsPerWriter` records each (all queued as fast as
   * the writer's buffer lets it), started `startMs` apart, against shards keeping the simulator's two buckets.
   * Measured as SinkQuotaBench measures: from `warmupS` after the first record stored until 90 % of all records
   * are stored, so a task that ends early and leaves the other to grow into its share shows in the figure.
   * Response latency varies between `latencyMs` and `latencyMs + jitterMs`, as a loaded machine's does.
   *
   * @param aggregates  records are KPL aggregates: every record of a shard shares one send lane (keyed by its
   *                    shard id), as the aggregator sends them
   * @param sharedPaces the writers share their shards' paces, as the tasks of one JVM do ([[ShardPaces]]); false
   *                    models writers in different JVMs
   * @param executors   JVMs the writers are dealt to, round robin: each JVM's writers share its paces (with
   *                    `sharedPaces`), JVMs pace apart
   * @param startShare  the share of each shard's quota every JVM's paces start at ([[driver.WriterShare]])
   */
  def simulateBatch(
      weights: Seq[Double],
      writers: Int,
      seconds: Int,
      recordBytes: Int = 100,
      aggregates: Boolean = false,
      startMs: Int = 0,
      warmupS: Int = 5,
      latencyMs: Int = 10,
      jitterMs: Int = 20,
      lanes: Int = 4,
      sharedPaces: Boolean = true,
      executors: Int = 1,
      startShare: Option[Double] = None): Result = {
    val perShard = math.min(1000.0, QuotaBytes / recordBytes)
    val achievable = perShard / weights.max
    val recordsPerWriter = (achievable * (seconds + warmupS) / writers).toLong
    val total = recordsPerWriter * writers
    val random = new Random(11)
    val n = weights.size
    val top = BigInteger.ONE.shiftLeft(128)
    val starts = (0 until n).map(i => top.multiply(BigInteger.valueOf(i)).divide(BigInteger.valueOf(n)))
    val map = ShardMap(starts.zipWithIndex.map { case (start, i) => s"s$i" -> start })
    val quotas = weights.map(_ => new ShardQuota)
    val cumulative = weights.scanLeft(0.0)(_ + _).tail
    val ok = (0 until n).map(i => PutRecordsResultEntry.builder().shardId(s"s$i").sequenceNumber("1").build())
    val refused = PutRecordsResultEntry.builder().errorCode("ProvisionedThroughputExceededException").build()
    val shardIndex = new util.IdentityHashMap[PendingRecord, Integer]()
    def nextRecord(): PendingRecord = {
      val x = random.nextDouble()
      val shard = math.max(0, cumulative.indexWhere(x < _))
      val k = random.nextInt(100)
      val key = if (aggregates) s"s$shard" else s"s$shard-k$k"
      val r = new PendingRecord(
        PutRecordsRequestEntry.builder().partitionKey(key).data(SdkBytes.fromUtf8String("x"))
          .explicitHashKey(starts(shard).add(BigInteger.valueOf(k + 1L)).toString).build(),
        key,
        recordBytes
      )
      shardIndex.put(r, shard)
      r
    }
    val jvms = Seq.fill(executors)(new ShardPaces(() => RateFlowController(500, 1, startShare)))
    final class W(val startAt: Long, jvm: ShardPaces) {
      val pacer = new SendPacer(
        FlowControlMode.Adaptive,
        500,
        n,
        _ => Some(map),
        startAt * 1000000L,
        if (sharedPaces) jvm else null)
      val lanesOf = new SendLanes(lanes, preserveKeyOrder = false, 10L << 20, pacer, startAt * 1000000L)
      val flights = mutable.PriorityQueue.empty[Flight](Ordering.by((f: Flight) => -f.dueMs))
      var left = recordsPerWriter
    }
    // Two requests' worth of records per lane and two requests' worth of bytes, as RecordPublisher bounds it.
    val boundRecords = 2 * lanes * 500
    val boundBytes = 2 * (10L << 20)
    val ws = (0 until writers).map(i => new W(i.toLong * startMs, jvms(i % executors)))
    var stored, throttledTotal = 0L
    var firstStoredMs = -1L
    var fromStored, fromThrottled = -1L
    var toStored, toThrottled = -1L
    var fromMs, toMs = 0L
    var t = 0L
    while (toMs == 0 && t < (seconds + warmupS) * 10000L) {
      val now = t * 1000000L
      quotas.foreach(_.refill(1))
      for (w <- ws if t >= w.startAt) {
        while (w.flights.nonEmpty && w.flights.head.dueMs <= t) answer(w.flights.dequeue(), w.pacer, w.lanesOf, now)
        while (w.left > 0 && w.lanesOf.queuedRecords < boundRecords && w.lanesOf.queuedBytes < boundBytes) {
          w.lanesOf.add(nextRecord(), now)
          w.left -= 1
        }
        var out = w.lanesOf.next(now)
        while (out != null) {
          val results = out.records.asScala.map { r =>
            val shard = shardIndex.get(r).intValue
            if (quotas(shard).take(recordBytes)) ok(shard) else refused
          }.asJava
          val got = results.asScala.count(_.errorCode() == null)
          stored += got
          throttledTotal += results.size - got
          w.flights.enqueue(new Flight(t + latencyMs + random.nextInt(jitterMs + 1), out, results))
          out = w.lanesOf.next(now)
        }
      }
      if (firstStoredMs < 0 && stored > 0) firstStoredMs = t
      if (firstStoredMs >= 0 && fromStored < 0 && t - firstStoredMs >= warmupS * 1000L) {
        fromStored = stored; fromThrottled = throttledTotal; fromMs = t
      }
      if (fromStored >= 0 && stored >= 0.9 * total) {
        toStored = stored; toThrottled = throttledTotal; toMs = t
      }
      t += 1
    }
    assert(toMs > 0, s"the write did not reach 90 % of $total records in ${t / 1000} s ($stored stored)")
    val window = (toMs - fromMs) / 1000.0
    Result(
      toStored - fromStored,
      achievable * window,
      toStored - fromStored + toThrottled - fromThrottled,
      toThrottled - fromThrottled,
      toStored + toThrottled,
      toThrottled)
  }

  private final class Flight(val dueMs: Long, val out: Outgoing, val results: util.List[PutRecordsResultEntry])

  /** An answer reaches its writer: the pacer hears it, and what was refused goes back to the lanes. */
  private def answer(f: Flight, pacer: SendPacer, lanes: SendLanes, now: Long): Unit = {
    lanes.completed(f.out)
    pacer.onResponse(f.out, f.results, now)
    val failed = new util.ArrayList[PendingRecord]()
    f.out.records.asScala.zip(f.results.asScala).foreach { case (r, res) =>
      if (res.errorCode() != null) failed.add(r)
    }
    if (!failed.isEmpty) lanes.resend(failed, if (pacer.pacing(failed)) now else now + 100000000L)
  }

  /**
   * The writer's own scheduling in closed loop, driven as `RecordPublisher` drives it: [[SendLanes]] with `lanes`
   * lanes and its [[SendPacer]], input buffered up to two requests per lane (endless input), throttled records
   * resent at once while paced (else after 100 ms). Keys belong to shards, as real keys do: `s<shard>-k<n>`, placed with an
   * explicit hash key inside the shard's range. `perShard = false` gives the pacer no shard map (one pace for the
   * stream).
   */
  def simulateWriter(
      weights: Seq[Double],
      writers: Int,
      perShard: Boolean,
      seconds: Int = 30,
      warmupS: Int = 5,
      latencyMs: Int = 20,
      lanes: Int = 4,
      recordBytes: Int = 100): Result = {
    val units = FlowController.units(recordBytes)
    val random = new Random(7)
    val n = weights.size
    val top = BigInteger.ONE.shiftLeft(128)
    val starts = (0 until n).map(i => top.multiply(BigInteger.valueOf(i)).divide(BigInteger.valueOf(n)))
    val map = ShardMap(starts.zipWithIndex.map { case (start, i) => s"s$i" -> start })
    val buckets = weights.map(_ => new Bucket(1000))
    val cumulative = weights.scanLeft(0.0)(_ + _).tail
    val ok = (0 until n).map(i => PutRecordsResultEntry.builder().shardId(s"s$i").sequenceNumber("1").build())
    val refused = PutRecordsResultEntry.builder().errorCode("ProvisionedThroughputExceededException").build()
    def nextRecord(): PendingRecord = {
      val x = random.nextDouble()
      val shard = math.max(0, cumulative.indexWhere(x < _))
      val k = random.nextInt(100)
      val key = s"s$shard-k$k"
      new PendingRecord(
        PutRecordsRequestEntry.builder().partitionKey(key).data(SdkBytes.fromUtf8String("x"))
          .explicitHashKey(starts(shard).add(BigInteger.valueOf(k + 1L)).toString).build(),
        key,
        recordBytes
      )
    }
    def shardOf(r: PendingRecord): Int = r.partitionKey.substring(1, r.partitionKey.indexOf('-')).toInt
    final class W {
      val pacer = new SendPacer(FlowControlMode.Adaptive, 500, n, _ => if (perShard) Some(map) else None, 0L)
      val lanesOf = new SendLanes(lanes, preserveKeyOrder = false, Long.MaxValue, pacer, 0L)
      val flights = mutable.Queue.empty[Flight]
    }
    val bound = 2 * lanes * 500
    val ws = Seq.fill(writers)(new W)
    var delivered, attempts, throttled = 0L
    for (t <- 0L until seconds * 1000L) {
      val now = t * 1000000L
      buckets.foreach(_.refill(1))
      val counting = t >= warmupS * 1000L
      for (w <- ws) {
        while (w.flights.nonEmpty && w.flights.head.dueMs <= t) answer(w.flights.dequeue(), w.pacer, w.lanesOf, now)
        while (w.lanesOf.queuedRecords < bound) w.lanesOf.add(nextRecord(), now)
        var out = w.lanesOf.next(now)
        while (out != null) {
          val results = out.records.asScala.map { r =>
            val shard = shardOf(r)
            if (buckets(shard).take(units)) ok(shard) else refused
          }.asJava
          if (counting) {
            val stored = results.asScala.count(_.errorCode() == null)
            attempts += results.size
            delivered += stored
            throttled += results.size - stored
          }
          w.flights.enqueue(new Flight(t + latencyMs, out, results))
          out = w.lanesOf.next(now)
        }
      }
    }
    Result(delivered, (seconds - warmupS) * 1000.0 / units / weights.max, attempts, throttled)
  }
}
