package io.github.sparkkinesis.it

import scala.collection.mutable

import org.apache.spark.scheduler.{SparkListener, SparkListenerStageCompleted}

/**
 * Sums the named accumulables (custom metrics among them) of every stage that completes while registered. A stage's
 * values are taken in at once: a test that waits for one metric of a stage reads the others of the same stage
 * (merged one by one, a test saw its stage's records written and, a moment before the next merge, no held bytes).
 */
final class StageAccumulables extends SparkListener {
  private val values = mutable.Map[String, Long]()
  override def onStageCompleted(event: SparkListenerStageCompleted): Unit = synchronized {
    event.stageInfo.accumulables.values.foreach { a =>
      for (n <- a.name; v <- a.value) values(n) = values.getOrElse(n, 0L) + v.toString.toLong
    }
  }
  /** Spark leaves metrics that stayed zero out of the accumulables. */
  def apply(name: String): Long = synchronized(values.getOrElse(name, 0L))
  override def toString: String = synchronized(values.toString)
}
