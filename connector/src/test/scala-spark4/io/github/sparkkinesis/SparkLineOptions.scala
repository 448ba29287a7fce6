package io.github.sparkkinesis

/** Options the connector refuses on the Spark line under test: none on Spark 4. */
object SparkLineOptions {
  val refused: Set[String] = Set.empty
}
