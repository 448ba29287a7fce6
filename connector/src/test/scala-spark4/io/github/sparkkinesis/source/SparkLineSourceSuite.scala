package io.github.sparkkinesis.source

import io.github.sparkkinesis.options.OptionReader
import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.{FetchPlanner, TriggerLimits}

/** Spark 4's side of what the two Spark lines do differently (the Spark 3.5 build has its own suite of this name). */
class SparkLineSourceSuite extends AnyFunSuite {
  test("byte limits are read from the trigger's limit, alone or with a record limit") {
    assert(FetchPlanner.limitsOf(ReadLimit.maxBytes(1000)) == TriggerLimits(None, Some(1000L), None))
    assert(FetchPlanner.limitsOf(ReadLimit.compositeLimit(Array(ReadLimit.maxRows(10), ReadLimit.maxBytes(64)))) ==
      TriggerLimits(Some(10L), Some(64L), None))
  }

  test("maxBytesPerTrigger becomes the stream's default byte limit") {
    val config = SourceConfig(OptionReader(Map("streamName" -> "s", "maxBytesPerTrigger" -> "1m")))
    assert(config.maxBytesPerTrigger.contains(1L << 20))
    assert(SparkLineSource.bytesOf(SparkLineSource.maxBytes(1L << 20)).contains(1L << 20))
  }
}
