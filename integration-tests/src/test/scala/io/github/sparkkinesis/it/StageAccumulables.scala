package io.github.sparkkinesis.it

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.scheduler.{SparkListener, SparkListenerStageCompleted}

/** Sums the named accumulables (custom metrics among them) of every stage that completes while registered. */
final class StageAccumulables extends SparkListener {
  private val values = new ConcurrentHashMap[String, java.lang.Long]()
  override def onStageCompleted(event: SparkListenerStageCompleted): Unit =
    event.stageInfo.accumulables.values.foreach { a =>
      for (n <- a.name; v <- a.value) values.merge(n, v.toString.toLong, (x, y) => x + y)
    }
  /** Spark leaves metrics that stayed zero out of the accumulables. */
  def apply(name: String): Long = Option(values.get(name)).map(_.longValue).getOrElse(0L)
  override def toString: String = values.toString
}
