package io.github.sparkkinesis.sink

import org.scalatest.funsuite.AnyFunSuite

class FlowControllerSuite extends AnyFunSuite {
  test("the ladder stays off while nothing throttles: full batches, no pause") {
    val f = new LadderFlowController(500, openShards = 1)
    (1 to 100).foreach(_ => f.onResponse(500, 0))
    assert(f.batchSize == 500 && f.delayMillis == 0 && f.currentLevel == 0)
  }

  test("each throttled response climbs at once: pause 100 ms doubling to the 10 s cap") {
    val f = new LadderFlowController(500, openShards = 1)
    val delays = (1 to 10).map { _ => f.onResponse(500, 1); f.delayMillis }
    assert(delays == Seq(100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000, 10000))
  }

  test("the batch halves per level down to 10 records per open shard") {
    def sizes(shards: Int) = {
      val f = new LadderFlowController(500, openShards = shards)
      (1 to 8).map { _ => f.onResponse(500, 3); f.batchSize }
    }
    assert(sizes(1) == Seq(250, 125, 62, 31, 15, 10, 10, 10))
    assert(sizes(4) == Seq(250, 125, 62, 40, 40, 40, 40, 40))
    assert(sizes(16) == Seq(250, 160, 160, 160, 160, 160, 160, 160))
    assert(sizes(100) == Seq(500, 500, 500, 500, 500, 500, 500, 500), "with enough shards the batch stays full")
  }

  test("a run of clean responses descends one level; a throttled one in between resets the run") {
    val f = new LadderFlowController(500, openShards = 1, cleanRunToRelax = 5)
    (1 to 3).foreach(_ => f.onResponse(500, 10))
    assert(f.currentLevel == 3)
    (1 to 4).foreach(_ => f.onResponse(100, 0))
    assert(f.currentLevel == 3, "four clean responses are not yet a run")
    f.onResponse(100, 1)
    assert(f.currentLevel == 4)
    (1 to 5).foreach(_ => f.onResponse(100, 0))
    assert(f.currentLevel == 3 && f.delayMillis == 400)
    (1 to 15).foreach(_ => f.onResponse(100, 0))
    assert(f.currentLevel == 0 && f.delayMillis == 0 && f.batchSize == 500, "fully relaxed after 4 runs")
  }

  test("a configured maximum below the floor is respected") {
    val f = new LadderFlowController(5, openShards = 4)
    f.onResponse(5, 5)
    assert(f.batchSize == 5)
  }

  test("AIMD: +10 per clean response up to the maximum, x0.99 per throttled one down to 10") {
    val f = new AimdFlowController(500)
    f.onResponse(500, 1)
    assert(f.batchSize == 495)
    f.onResponse(495, 0)
    assert(f.batchSize == 500, "capped at the maximum")
    (1 to 1000).foreach(_ => f.onResponse(10, 1))
    assert(f.batchSize == 10)
    assert(f.delayMillis == 0)
  }

  test("off never adapts") {
    val f = FlowController(FlowControlMode.Off, 300, 1)
    (1 to 20).foreach(_ => f.onResponse(300, 300))
    assert(f.batchSize == 300 && f.delayMillis == 0)
  }
}
