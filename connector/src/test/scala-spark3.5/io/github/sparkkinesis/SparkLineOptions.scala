package io.github.sparkkinesis

/** Options the connector refuses on the Spark line under test (SparkLineSourceSuite checks how). */
object SparkLineOptions {
  val refused: Set[String] = Set("maxBytesPerTrigger")
}
