package io.github.sparkkinesis

import io.github.sparkkinesis.source.SourceTaskMetrics
import org.scalatest.funsuite.AnyFunSuite

/** Spark's UI re-creates custom metrics from their class names with a zero-argument constructor. */
class CustomMetricsSuite extends AnyFunSuite {
  test("every source and sink metric can be re-created by class name, as the Spark UI does") {
    val metrics = SourceTaskMetrics.supported ++ sink.SinkMetrics.supported
    for (m <- metrics) {
      val copy = Class.forName(m.getClass.getName).getDeclaredConstructor().newInstance()
        .asInstanceOf[org.apache.spark.sql.connector.metric.CustomMetric]
      assert(copy.name() == m.name() && copy.description() == m.description())
    }
    assert(metrics.map(_.name()).distinct.length == metrics.length, "metric names are unique")
  }
}
