package io.github.sparkkinesis.simulator

import org.scalatest.funsuite.AnyFunSuite

/** Keeps `make bench-simulator` working: a one-second run moves records both ways. Figures belong to the bench. */
class SimulatorBenchSmokeSuite extends AnyFunSuite with SimulatorFixture {
  test("the benchmark loop writes and reads records") {
    val result = SimulatorBench.run(kinesis, seconds = 1, writers = 1, shards = 2, warmUpMillis = 200)
    assert(result.written > 0 && result.read > 0, result)
    assert(result.report(server.endpoint).contains("records/s"))
  }
}
