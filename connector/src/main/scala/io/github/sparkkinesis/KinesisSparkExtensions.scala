package io.github.sparkkinesis

import io.github.sparkkinesis.sql.{KinesisFunctions, ResolveKinesisFunctions}
import org.apache.spark.sql.SparkSessionExtensions

/**
 * `spark.sql.extensions=io.github.sparkkinesis.KinesisSparkExtensions` (SPEC §2 SQL): the table functions
 * `read_kinesis(streamName => ..., ...)` and `kinesis_shards(streamName => ...)`.
 */
class KinesisSparkExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    KinesisFunctions.all.foreach(f => extensions.injectTableFunction((f.identifier, f.info, f.build _)))
    extensions.injectResolutionRule(_ => ResolveKinesisFunctions)
  }
}
