package io.github.sparkkinesis.it

import io.github.sparkkinesis.KinesisSources
import io.github.sparkkinesis.options.KinesisOptionException
import org.scalatest.funsuite.AnyFunSuite

/** The Scala builder gives the same source as `spark.readStream.format("kinesis")`, streaming and batch. */
class SourceBuilderSuite extends AnyFunSuite with SourceTest {
  private def builder(stream: String) = KinesisSources.kinesis(stream)
    .withEndpoint(emulator.endpoint.toString).withRegion(TestEnv.region)
    .withCredentials(TestEnv.accessKey, TestEnv.secretKey).withInitialPosition("trim_horizon")

  test("build(spark) and buildStreaming(spark) read the stream as a streaming DataFrame; buildBatch(spark) as a batch one") {
    val stream = newStreamName("builder")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, (1 to 20).map(i => (s"k$i", s"v$i")))
    val streaming = builder(stream).withMaxRecordsPerTrigger(7).build(spark)
    assert(streaming.isStreaming)
    assertExactly(readAvailableNow(streaming).records, put)
    val typed = builder(stream).buildStreaming(spark)
    assert(typed.isStreaming)
    assertExactly(readAvailableNow(typed).records, put)
    val batch = builder(stream).buildBatch(spark)
    assert(!batch.isStreaming)
    assert(batch.count() == 20)
  }

  test("a bad value fails in build, before any query, with the option table's message") {
    val e = intercept[KinesisOptionException](builder("s").withShardsPerTask(0).build(spark))
    assert(e.getMessage == "Invalid value '0' for option 'shardsPerTask': expected an integer in 1..10000.")
  }
}
