package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths, StandardCopyOption}

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.streaming.Trigger

/**
 * Run by FaultMatrixSuite through spark-submit: reads a stream into an idempotent file sink, one file per batch id
 * (`batch-<id>`, replaced whole when a batch is replayed), each line `shardId sequenceNumber partitionKey data`.
 *
 * `hold <n>`: from batch n on, writes the batch's rows to `started-<id>` and then waits (for a file that never
 * comes) inside the batch, so the driver can be killed with SIGKILL mid-batch, its offsets logged and its commit not.
 * `finish`: reads what is there with Trigger.AvailableNow and exits.
 */
object DriverKillProbe {
  private def writeAtomically(target: Path, lines: Seq[String]): Unit = {
    val temp = target.resolveSibling(s".${target.getFileName}.tmp")
    Files.write(temp, lines.mkString("", "\n", "\n").getBytes(UTF_8))
    Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
  }

  def main(args: Array[String]): Unit = {
    val Array(endpoint, stream, checkpoint, out, mode, holdFrom) = args.padTo(6, "0")
    val output = Paths.get(out)
    val spark = SparkSession.builder().getOrCreate()
    try {
      val rows = spark.readStream.format("kinesis").options(Map("streamName" -> stream, "endpoint" -> endpoint,
          "region" -> "us-east-1", "awsAccessKey" -> "test", "awsSecretKey" -> "test",
          "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "10")).load()
        .selectExpr("concat_ws(' ', shardId, sequenceNumber, partitionKey, cast(data as string))")
      val query = rows.writeStream.option("checkpointLocation", checkpoint)
        .trigger(if (mode == "finish") Trigger.AvailableNow() else Trigger.ProcessingTime(0))
        .foreachBatch { (batch: DataFrame, id: Long) =>
          val lines = batch.collect().map(_.getString(0)).toSeq
          if (mode == "hold" && id >= holdFrom.toLong) {
            writeAtomically(output.resolve(s"started-$id"), lines)
            val deadline = System.nanoTime() + 300L * 1000000000L
            while (!Files.exists(output.resolve("release")) && System.nanoTime() < deadline) Thread.sleep(100)
            throw new IllegalStateException(s"batch $id was held but the driver was not killed")
          }
          writeAtomically(output.resolve(s"batch-$id"), lines)
        }
        .start()
      query.awaitTermination()
    } finally spark.stop()
  }
}
