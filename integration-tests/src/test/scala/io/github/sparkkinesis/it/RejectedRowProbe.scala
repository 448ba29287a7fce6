package io.github.sparkkinesis.it

import org.apache.spark.sql.SparkSession

/**
 * Run by FaultMatrixSuite through spark-submit on `local[2,4]` (four attempts per task, like a cluster's
 * `spark.task.maxFailures`): one task writes ids 0 until n, then a row with a null partition key. The write must
 * fail naming the column, and the rows before the bad one must be in the stream once, not once per attempt.
 * Prints `PROBE` lines.
 */
object RejectedRowProbe {
  def main(args: Array[String]): Unit = {
    val Array(endpoint, stream, count) = args
    val n = count.toInt
    val spark = SparkSession.builder().getOrCreate()
    import spark.implicits._
    try {
      val rows = ((0 until n).map(i => (s"key-${i % 7}", i.toString)) :+ ((null: String), "bad"))
        .toDF("partitionKey", "data").coalesce(1)
      val failure = try {
        rows.write.format("kinesis").mode("append").options(Map("streamName" -> stream, "endpoint" -> endpoint,
          "region" -> "us-east-1", "awsAccessKey" -> "test", "awsSecretKey" -> "test", "maxRecordsPerRequest" -> "10"))
          .save()
        None
      } catch { case e: Exception => Some(e) }
      val messages = failure.toSeq.flatMap(e => Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage))
      println(s"PROBE failed=${failure.isDefined}")
      messages.foreach(m => println(s"PROBE message ${String.valueOf(m).replace('\n', ' ')}"))
    } finally spark.stop()
  }
}
