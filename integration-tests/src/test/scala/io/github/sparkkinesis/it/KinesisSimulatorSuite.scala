package io.github.sparkkinesis.it

import java.util.UUID

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.ProvisionedThroughputExceededException

/** The simulator fixture other suites build on: started from the built jar, driven through its admin API. */
class KinesisSimulatorSuite extends AnyFunSuite with SimulatorSuite {

  test("the fixture's simulator serves the test client and enforces quotas set through the admin API") {
    val stream = s"sim-it-${UUID.randomUUID().toString.take(8)}"
    simulatorKinesis.createStream(stream, 1)
    val Seq(shard) = simulatorKinesis.shardIds(stream)
    simulatorKinesis.put(stream, "k", Array[Byte](1, 2, 3))
    assert(simulator.admin.shardCounter(stream, shard, "putRecords") == 1)

    simulator.admin.quotas(factor = 0.0001) // a record every 10 s per shard: the SDK's retries give up first
    intercept[ProvisionedThroughputExceededException] {
      (1 to 10).foreach(_ => simulatorKinesis.put(stream, "k", Array[Byte](4)))
    }
    assert(simulator.admin.shardCounter(stream, shard, "throttledPutRecords") > 0)
    simulator.admin.quotas(enabled = false)
    (1 to 10).foreach(_ => simulatorKinesis.put(stream, "k", Array[Byte](5)))
  }
}
