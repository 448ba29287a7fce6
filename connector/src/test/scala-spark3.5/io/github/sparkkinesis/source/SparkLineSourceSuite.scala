package io.github.sparkkinesis.source

import io.github.sparkkinesis.options.{KinesisOptionException, OptionReader}
import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.{FetchPlanner, TriggerLimits}
import io.github.sparkkinesis.source.executor.KinesisPartitionReaderFactory

/** Spark 3.5's side of what the two Spark lines do differently: Spark 4-only features are refused, never ignored. */
class SparkLineSourceSuite extends AnyFunSuite {
  test("maxBytesPerTrigger (a byte limit, Spark 4.0+) is refused when the options are read, saying what to use") {
    val e =
      intercept[KinesisOptionException](SourceConfig(OptionReader(Map("streamName" -> "s", "maxBytesPerTrigger" -> "1m"))))
    assert(
      e.getMessage.startsWith("Option 'maxBytesPerTrigger' (value '1048576') needs Spark 4.0 or later"),
      e.getMessage)
    assert(e.getMessage.contains("use maxRecordsPerTrigger"), e.getMessage)
  }

  test("record limits work as on Spark 4") {
    assert(
      SourceConfig(OptionReader(Map("streamName" -> "s", "maxRecordsPerTrigger" -> "10"))).maxRecordsPerTrigger.contains(
        10L))
    assert(FetchPlanner.limitsOf(ReadLimit.maxRows(10)) == TriggerLimits(Some(10L), None, None))
  }

  test("a real-time task, which no Spark 3.5 trigger plans, is refused naming the Spark version it needs") {
    val partition = RealTimeInputPartition("id", SourceConfig(OptionReader(Map("streamName" -> "s"))), Nil, None)
    val e = intercept[UnsupportedOperationException](KinesisPartitionReaderFactory.createReader(partition))
    assert(e.getMessage.startsWith("Real-time mode needs Spark 4.1 or later"), e.getMessage)
  }
}
