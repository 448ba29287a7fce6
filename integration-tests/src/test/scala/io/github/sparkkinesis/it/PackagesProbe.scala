package io.github.sparkkinesis.it

import org.apache.spark.SparkEnv
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.DataSource

/**
 * Run by SparkSubmitPackagesSuite through `spark-submit --packages`: reports where the connector's classes were
 * loaded from on the driver and on each executor, one `PROBE` line each.
 */
object PackagesProbe {
  private val ProviderClass = "io.github.sparkkinesis.KinesisProvider"
  private val ShadedClientClass = "io.github.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.KinesisClient"

  private def origin(className: String): String =
    Class.forName(className, true, Thread.currentThread().getContextClassLoader)
      .getProtectionDomain.getCodeSource.getLocation.toString

  def main(args: Array[String]): Unit = {
    val spark = SparkSession.builder().getOrCreate()
    try {
      val pid = ProcessHandle.current().pid()
      val byShortName = DataSource.lookupDataSource("kinesis", spark.sessionState.conf).getName
      println(s"PROBE driver pid=$pid provider=${origin(ProviderClass)} shortName=$byShortName")
      val executors = spark.sparkContext.parallelize(1 to 2, 2).map { _ =>
        s"PROBE executor id=${SparkEnv.get.executorId} pid=${ProcessHandle.current().pid()} " +
          s"provider=${origin(ProviderClass)} client=${origin(ShadedClientClass)}"
      }.collect()
      executors.distinct.foreach(println)
    } finally spark.stop()
  }
}
