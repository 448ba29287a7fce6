package io.github.sparkkinesis.it

import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Suite}

/** Mixin: a local[2] SparkSession for the suite; the shaded connector jar is on the test classpath. */
trait SparkSuite extends BeforeAndAfterAll { this: Suite =>
  @transient private var sparkOpt: Option[SparkSession] = None

  def spark: SparkSession = sparkOpt.getOrElse(throw new IllegalStateException("SparkSession not started"))

  /** Spark's master: `local[2, 2]` gives a failed task a second attempt. */
  protected def master: String = "local[2]"

  /** Settings a suite adds to the session (e.g. the event log). */
  protected def sparkConf: Map[String, String] = Map.empty

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    sparkOpt = Some(SparkSession.builder()
      .master(master)
      .appName(getClass.getSimpleName)
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "2")
      .config(sparkConf)
      .getOrCreate())
  }

  override protected def afterAll(): Unit = {
    try sparkOpt.foreach(_.stop())
    finally super.afterAll()
  }
}
