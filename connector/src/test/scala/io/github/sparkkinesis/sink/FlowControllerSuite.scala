package io.github.sparkkinesis.sink

import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.sink.executor.{
  AimdFlowController,
  FixedFlowController,
  FlowController,
  LadderFlowController,
  RateFlowController
}

class FlowControllerSuite extends AnyFunSuite {
  private val Ms = 1000000L

  /** A response of `records` one-unit records, sent at `sentMs` and back at `nowMs` (virtual time). */
  private def response(records: Int, throttled: Int, sentMs: Long = 0, nowMs: Long = 0, full: Boolean = true) =
    FlowController.Response(records, records.toDouble, throttled, sentMs * Ms, nowMs * Ms, full)

  /** An adaptive controller that has just started pacing: 1000 units stored, then its first throttled response at 20 ms. */
  private def pacing(): RateFlowController = {
    val f = new RateFlowController(500, openShards = 1)
    f.onResponse(response(1000, 0, 0, 0))
    f.onResponse(response(100, 10, sentMs = 10, nowMs = 20))
    f
  }

  test("write units: one per record up to 1 KiB, then one per KiB") {
    assert(FlowController.units(100) == 1.0 && FlowController.units(1024) == 1.0 && FlowController.units(4096) == 4.0)
  }

  test("adaptive (rate) stays off while nothing throttles: full batches, no pause") {
    val f = new RateFlowController(500, openShards = 1)
    (1 to 100).foreach(i => f.onResponse(response(500, 0, i * 10L, i * 10L + 5)))
    assert(f.batchSize == 500 && f.pauseNanos(500) == 0 && f.unitsPerSecond.isInfinite)
  }

  test("adaptive: a heavily throttled response cuts deeper, down to half") {
    val f = pacing()
    val first = f.unitsPerSecond
    f.onResponse(response(100, 30, sentMs = 30, nowMs = 40))
    assert(math.abs(f.unitsPerSecond - first * 0.7) < 1e-6, "30 % refused: keep 70 %")
    f.onResponse(response(100, 90, sentMs = 50, nowMs = 60))
    assert(math.abs(f.unitsPerSecond - first * 0.35) < 1e-6, "90 % refused: keep half")
  }

  test("adaptive: a writer throttled within its first second measures its delivery over the time it has sent") {
    val f = new RateFlowController(500, openShards = 1)
    f.onResponse(response(50, 0, sentMs = 0, nowMs = 100))
    f.onResponse(response(50, 50, sentMs = 150, nowMs = 250))
    assert(math.abs(f.unitsPerSecond - 50 / 0.25 * 0.9) < 1e-6)
  }

  test("adaptive: the first throttling starts the rate at the last second's delivery, less 10 %") {
    val f = new RateFlowController(500, openShards = 1)
    // 2000 units stored in the last second (and 5000 more, longer ago, that no longer count)
    (0 until 10).foreach(i => f.onResponse(response(500, 0, sentMs = i * 100L, nowMs = i * 100L)))
    (0 until 20).foreach(i => f.onResponse(response(100, 0, sentMs = 2000 + i * 50L, nowMs = 2000 + i * 50L)))
    f.onResponse(response(100, 100, sentMs = 2990, nowMs = 2999))
    assert(math.abs(f.unitsPerSecond - 2000 * 0.9) < 1e-6)
    assert(f.batchSize == 180, "a tenth of a second's worth")
    assert(f.pauseNanos(180) == 100 * Ms)
  }

  test("adaptive: one cut per episode — responses to requests sent before a cut do not cut again") {
    val f = pacing()
    val first = f.unitsPerSecond
    f.onResponse(response(100, 10, sentMs = 15, nowMs = 25))
    f.onResponse(response(100, 10, sentMs = 19, nowMs = 30))
    // Not cut: they reported the old rate's overload. What they stored joins the first estimate (over its 0.1 s).
    val seeded = first + 2 * 90 / 0.1 * 0.9
    assert(math.abs(f.unitsPerSecond - seeded) < 1e-6, "requests in flight at the cut cut again")
    f.onResponse(response(100, 10, sentMs = 21, nowMs = 40))
    assert(math.abs(f.unitsPerSecond - seeded * 0.9) < 1e-6, "a request sent after the cut was throttled too")
    f.onResponse(response(100, 0, sentMs = 12, nowMs = 45))
    assert(
      math.abs(f.unitsPerSecond - seeded * 0.9) < 1e-6,
      "the first estimate is closed once a later request answered")
  }

  test("adaptive: a writer whose first answer was wholly refused is not paced from nothing") {
    // Four requests leave at once; the one the shard refused whole comes back first, the three stored ones after.
    val f = new RateFlowController(500, openShards = 1)
    f.onResponse(response(500, 500, sentMs = 0, nowMs = 10))
    assert(
      f.unitsPerSecond == RateFlowController.MinUnitsPerSecond,
      "nothing stored yet: the estimate starts at the floor")
    (1 to 3).foreach(i => f.onResponse(response(500, 0, sentMs = 0, nowMs = 10L + i)))
    assert(math.abs(f.unitsPerSecond - (1.0 + 1500 / 0.1 * 0.9)) < 1e-6, "what the requests in flight stored counts")
  }

  test("adaptive: clean full responses raise the rate, faster the longer nothing throttles; partial ones and old news do not") {
    val f = new RateFlowController(500, openShards = 1)
    f.onResponse(response(100, 0, 0, 0))
    f.onResponse(response(100, 10, sentMs = 0, nowMs = 500)) // the first estimate
    f.onResponse(response(100, 10, sentMs = 600, nowMs = 1000)) // a cut from a known rate: 90 % of it is kept
    val start = f.unitsPerSecond
    f.onResponse(response(100, 0, sentMs = 900, nowMs = 1500))
    assert(f.unitsPerSecond == start, "sent before the cut")
    f.onResponse(response(100, 0, sentMs = 1500, nowMs = 2000, full = false))
    assert(f.unitsPerSecond == start, "the writer had nothing more to send: no evidence of spare capacity")
    f.onResponse(response(100, 0, sentMs = 1900, nowMs = 2000))
    assert(math.abs(f.unitsPerSecond - start * 1.2) < 1e-6, "one second after the cut: 10 % x (1 + 1)")
    val before = f.unitsPerSecond
    f.onResponse(response(100, 0, sentMs = 2900, nowMs = 3000))
    assert(math.abs(f.unitsPerSecond - before * 1.3) < 1e-6, "two seconds after the cut: 10 % x (1 + 2)")
  }

  test("adaptive: once pacing, throttled records need no backoff of their own; the other controllers keep it") {
    val f = new RateFlowController(500, openShards = 1)
    assert(!f.pacing)
    f.onResponse(response(100, 10, 0, 10))
    assert(f.pacing)
    val a = new AimdFlowController(500)
    a.onResponse(response(100, 10))
    assert(!a.pacing && !new FixedFlowController(500).pacing)
  }

  test("adaptive: far below the rate last refused (or with only a first estimate) the rate doubles every half second") {
    val cold = new RateFlowController(500, openShards = 1)
    cold.onResponse(response(50, 0, sentMs = 0, nowMs = 100))
    cold.onResponse(response(50, 50, sentMs = 900, nowMs = 1000))
    val seed = cold.unitsPerSecond
    cold.onResponse(response(20, 0, sentMs = 1100, nowMs = 1500))
    assert(math.abs(cold.unitsPerSecond - seed * 2) < 1e-6, "no rate was refused yet: the first estimate is a floor")

    val deep = pacing()
    val refused = deep.unitsPerSecond
    deep.onResponse(response(100, 25, sentMs = 30, nowMs = 40)) // keeps 75 %: still a mild refusal
    deep.onResponse(response(100, 0, sentMs = 50, nowMs = 540))
    assert(
      math.abs(deep.unitsPerSecond - refused * 0.8) < 1e-6,
      "doubling (0.75 -> 1.5) stops at 80 % of the rate refused")
    val mark = deep.unitsPerSecond
    deep.onResponse(response(100, 0, sentMs = 600, nowMs = 1040))
    assert(deep.unitsPerSecond > mark && deep.unitsPerSecond < mark * 1.3, "then gentle probing")

    val heavy = pacing()
    heavy.onResponse(response(100, 90, sentMs = 30, nowMs = 40)) // a heavy refusal: keeps half, forgets the mark
    val low = heavy.unitsPerSecond
    heavy.onResponse(response(100, 0, sentMs = 50, nowMs = 1040))
    assert(math.abs(heavy.unitsPerSecond - low * 4) < 1e-6, "no mark: doubling twice in a second")
  }

  test("adaptive: a writer whose neighbour left grows into the freed share within seconds, at most doubling per second") {
    val f = pacing()
    f.onResponse(response(100, 10, sentMs = 30, nowMs = 40)) // a mild refusal: the mark is this rate
    val rate = f.unitsPerSecond
    val perSecond = (1 to 40).map { i =>
      f.onResponse(response(100, 0, sentMs = 40L + i * 100 - 10, nowMs = 40L + i * 100))
      f.unitsPerSecond
    }.grouped(10).map(_.last).toSeq
    assert(perSecond(2) >= rate * 2, s"3 s after the cut the rate has doubled: ${perSecond.map(_ / rate)}")
    val steps = (rate +: perSecond).sliding(2).map { case Seq(a, b) => b / a }.toSeq
    assert(steps.forall(_ <= math.pow(1.1, 10) + 1e-9), s"at most 10 % per 100 ms: $steps")
  }

  test("adaptive: one refused record out of two (a paced request of KPL aggregates) is a mild refusal, five are heavy") {
    val coarse = pacing()
    val before = coarse.unitsPerSecond
    coarse.onResponse(FlowController.Response(2, 100, 1, 30 * Ms, 40 * Ms, fullBatch = true))
    assert(math.abs(coarse.unitsPerSecond - before * 0.5) < 1e-6, "half refused: the deepest cut")
    coarse.onResponse(FlowController.Response(1, 50, 0, 50 * Ms, 540 * Ms, fullBatch = true))
    assert(
      math.abs(coarse.unitsPerSecond - before * 0.8) < 1e-6,
      "the mark holds: doubling stops at 80 % of the rate refused")

    val heavy = pacing()
    val low = heavy.unitsPerSecond
    heavy.onResponse(FlowController.Response(8, 400, 5, 30 * Ms, 40 * Ms, fullBatch = true))
    heavy.onResponse(FlowController.Response(1, 50, 0, 50 * Ms, 540 * Ms, fullBatch = true))
    assert(
      math.abs(heavy.unitsPerSecond - low * 0.5 * 2) < 1e-6,
      "five refused: the deepest cut, then no mark: doubling")
  }

  test("adaptive: the rate never falls below one unit per second; the batch keeps its floor per open shard") {
    val f = new RateFlowController(500, openShards = 4)
    f.onResponse(response(10, 10, 0, 0))
    (1 to 200).foreach(i => f.onResponse(response(10, 10, sentMs = i * 10L, nowMs = i * 10L + 5)))
    assert(f.unitsPerSecond == RateFlowController.MinUnitsPerSecond)
    assert(f.batchSize == 40)
    assert(f.pauseNanos(10) == 10000 * Ms, "ten units at the slowest rate: the 10 s pause of the seed design")
  }

  test("adaptive with a starting share: paced from the first request at its share of the quota, never above it") {
    val half = RateFlowController(500, 1, Some(0.5))
    assert(half.pacing && half.unitsPerSecond == 500.0 && half.batchSize == 50, "half of 1000 units/s, 0.1 s a request")
    assert(RateFlowController(500, 4, Some(0.5)).unitsPerSecond == 2000.0, "a stream-wide pace: half of 4 shards'")
    assert(RateFlowController(500, 1, Some(2.0)).unitsPerSecond == 1000.0, "never above the quota")
    assert(RateFlowController(500, 1, Some(0.001)).unitsPerSecond == RateFlowController.SharedMinUnitsPerSecond)
    // Clean for ten seconds: it doubles once clean for a second, up to the quota and no further.
    (0 until 100).foreach(i => half.onResponse(response(50, 0, sentMs = i * 100L, nowMs = i * 100L + 20)))
    assert(half.unitsPerSecond == 1000.0)
  }

  test("adaptive with a starting share: additive growth for a second after a cut, then doubling each second") {
    val f = RateFlowController(500, 1, Some(0.5))
    f.onResponse(response(50, 25, sentMs = 0, nowMs = 20)) // half refused: the deepest cut
    assert(f.unitsPerSecond == 250.0)
    def clean(i: Int): Unit = f.onResponse(response(25, 0, sentMs = 20L + i * 100 - 10, nowMs = 20L + i * 100))
    (1 to 9).foreach(clean)
    assert(
      math.abs(f.unitsPerSecond - 295.0) < 1e-6,
      s"5 % of the quota a second while the cut is young: ${f.unitsPerSecond}")
    (10 to 19).foreach(clean)
    assert(math.abs(f.unitsPerSecond - 590.0) < 1e-6, s"then doubling each second: ${f.unitsPerSecond}")
  }

  test("adaptive with a starting share: the rate never falls below 20 units a second") {
    val f = RateFlowController(500, 1, Some(0.5))
    f.onResponse(response(10, 10, 0, 0))
    (1 to 200).foreach(i => f.onResponse(response(10, 10, sentMs = i * 10L, nowMs = i * 10L + 5)))
    assert(f.unitsPerSecond == RateFlowController.SharedMinUnitsPerSecond)
  }

  test("the driver's starting share: one over the executors writing at once, none when one JVM writes") {
    import io.github.sparkkinesis.sink.driver.WriterShare.forExecutors
    assert(forExecutors(1, 8).isEmpty && forExecutors(4, 1).isEmpty, "one executor, or one task")
    assert(forExecutors(2, 8).contains(0.5) && forExecutors(3, 2).contains(0.5) && forExecutors(3, 3).contains(1.0 / 3))
  }

  test("the ladder stays off while nothing throttles: full batches, no pause") {
    val f = new LadderFlowController(500, openShards = 1)
    (1 to 100).foreach(_ => f.onResponse(response(500, 0)))
    assert(f.batchSize == 500 && f.delayMillis == 0 && f.currentLevel == 0)
  }

  test("ladder: each throttled response climbs at once: pause 100 ms doubling to the 10 s cap") {
    val f = new LadderFlowController(500, openShards = 1)
    val delays = (1 to 10).map { _ => f.onResponse(response(500, 1)); f.delayMillis }
    assert(delays == Seq(100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000))
    assert(f.pauseNanos(1) == 10000 * Ms)
  }

  test("ladder: the batch halves per level down to 10 records per open shard") {
    def sizes(shards: Int) = {
      val f = new LadderFlowController(500, openShards = shards)
      (1 to 8).map { _ => f.onResponse(response(500, 3)); f.batchSize }
    }
    assert(sizes(1) == Seq(250, 125, 62, 31, 15, 10, 10, 10))
    assert(sizes(4) == Seq(250, 125, 62, 40, 40, 40, 40, 40))
    assert(sizes(16) == Seq(250, 160, 160, 160, 160, 160, 160, 160))
    assert(sizes(100) == Seq(500, 500, 500, 500, 500, 500, 500, 500), "with enough shards the batch stays full")
  }

  test("ladder: a run of clean responses descends one level; a throttled one in between resets the run") {
    val f = new LadderFlowController(500, openShards = 1, cleanRunToRelax = 5)
    (1 to 3).foreach(_ => f.onResponse(response(500, 10)))
    assert(f.currentLevel == 3)
    (1 to 4).foreach(_ => f.onResponse(response(100, 0)))
    assert(f.currentLevel == 3, "four clean responses are not yet a run")
    f.onResponse(response(100, 1))
    assert(f.currentLevel == 4)
    (1 to 5).foreach(_ => f.onResponse(response(100, 0)))
    assert(f.currentLevel == 3 && f.delayMillis == 400)
    (1 to 15).foreach(_ => f.onResponse(response(100, 0)))
    assert(f.currentLevel == 0 && f.delayMillis == 0 && f.batchSize == 500, "fully relaxed after 4 runs")
  }

  test("a configured maximum below the floor is respected") {
    val f = new LadderFlowController(5, openShards = 4)
    f.onResponse(response(5, 5))
    assert(f.batchSize == 5)
    val r = new RateFlowController(5, openShards = 4)
    r.onResponse(response(5, 5))
    assert(r.batchSize == 5)
  }

  test("AIMD: +10 per clean response up to the maximum, x0.99 per throttled one down to 10, no pause") {
    val f = new AimdFlowController(500)
    f.onResponse(response(500, 1))
    assert(f.batchSize == 495)
    f.onResponse(response(495, 0))
    assert(f.batchSize == 500, "capped at the maximum")
    (1 to 1000).foreach(_ => f.onResponse(response(10, 1)))
    assert(f.batchSize == 10)
    assert(f.pauseNanos(10) == 0)
  }

  test("off never adapts") {
    val f = FlowController(FlowControlMode.Off, 300, 1)
    (1 to 20).foreach(_ => f.onResponse(response(300, 300)))
    assert(f.batchSize == 300 && f.pauseNanos(300) == 0)
  }
}
