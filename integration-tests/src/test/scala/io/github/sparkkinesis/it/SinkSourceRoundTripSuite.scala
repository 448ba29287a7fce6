package io.github.sparkkinesis.it

import io.github.sparkkinesis.{KinesisSinks, KinesisSources}
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

/** Written with the sink, read back with the source: the two halves of the connector agree. */
class SinkSourceRoundTripSuite extends AnyFunSuite with SourceTest {
  private def sink(stream: String) = KinesisSinks.kinesis(stream).withEndpoint(emulator.endpoint.toString)
    .withRegion(TestEnv.region).withCredentials(TestEnv.accessKey, TestEnv.secretKey)
  private def source(stream: String) = KinesisSources.kinesis(stream).withEndpoint(emulator.endpoint.toString)
    .withRegion(TestEnv.region).withCredentials(TestEnv.accessKey, TestEnv.secretKey).withInitialPosition("trim_horizon")

  test("every record the sink wrote comes back from the source, keys and payloads intact, in order per key") {
    val stream = newStreamName("roundtrip")
    kinesis.createStream(stream, 4)
    val input = spark.range(0, 300, 1, 3).select(
      concat(lit("user-"), (col("id") % 17).cast("string")).as("partitionKey"),
      format_string("event-%05d", col("id")).as("data"))
    sink(stream).buildBatch(input).save()

    val read = readAvailableNow(source(stream).build(spark)).records
    assert(read.map(r => (r.partitionKey, r.data)).toSet ==
      input.collect().map(r => (r.getString(0), r.getString(1))).toSet)
    assert(read.size == 300, "each record exactly once")
    // Within an input partition the sink keeps each key's order; ids grow within every partition of range().
    for ((key, rs) <- read.groupBy(_.partitionKey)) {
      val ids = rs.sortBy(r => BigInt(r.sequenceNumber)).map(_.data.stripPrefix("event-").toInt)
      for (part <- ids.groupBy(_ / 100).values) assert(part == part.sorted, s"key $key out of order: $part")
    }
  }

  test("a DataFrame read with the source is written back with the sink unchanged") {
    val from = newStreamName("copy-from")
    val to = newStreamName("copy-to")
    kinesis.createStream(from, 2)
    kinesis.createStream(to, 2)
    val put = kinesis.putAll(from, (1 to 40).map(i => (s"k${i % 5}", s"payload-$i")))
    source(from).buildBatch(spark).write.format("kinesis").mode("append")
      .options(sink(to).options()).save()
    val copied = readAvailableNow(source(to).build(spark)).records
    assert(copied.map(r => (r.partitionKey, r.data)).sorted == put.map(p => (p.partitionKey, p.data)).sorted)
  }
}
