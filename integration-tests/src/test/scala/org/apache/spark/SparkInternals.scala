package org.apache.spark

import org.apache.spark.sql.SparkSession

/** What tests read of Spark's internals that only code in Spark's package may reach. */
object SparkInternals {
  /** Waits until every event posted so far reached every listener (the SQL tab's store, the event log). */
  def drainListeners(sc: SparkContext): Unit = sc.listenerBus.waitUntilEmpty()

  /** Everything the SQL tab shows of every execution: descriptions, plan text, plan graph nodes, configs. */
  def sqlTabText(spark: SparkSession): Seq[String] = {
    val store = spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sharedState.statusStore
    store.executionsList().flatMap { e =>
      Seq(e.description, e.details, e.physicalPlanDescription, e.modifiedConfigs.toString) ++
        e.errorMessage ++ store.planGraph(e.executionId).allNodes.flatMap(n => Seq(n.name, n.desc))
    }
  }
}
