package io.github.sparkkinesis

import org.apache.spark.sql.SparkSession

/**
 * One jar serves every Spark 4.x, and minor releases add APIs (real-time mode and `FROM STREAM` in 4.1): a class
 * that names one of them cannot load on an older Spark, so the code that needs it is reached only after asking.
 */
private[sparkkinesis] object SparkClasses {
  /** Whether the running Spark has the class; Spark's own loader, which is the one our classes resolve it from. */
  def has(className: String): Boolean =
    try {
      Class.forName(className, false, classOf[SparkSession].getClassLoader)
      true
    } catch {
      case _: ClassNotFoundException | _: LinkageError => false
    }
}
