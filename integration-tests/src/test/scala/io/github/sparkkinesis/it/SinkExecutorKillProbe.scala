package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Paths}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.sink.PaceStartShareMetric
import org.apache.spark.{Success, TaskContext}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.SparkSession

/**
 * Run by FaultMatrixSuite through spark-submit on `local-cluster[2,1,1024]`: writes ids 0 until n with the sink,
 * `partitions` tasks over contiguous id ranges. The first attempt of the task writing partition 1 stops at the
 * middle of its rows (the rows before are taken by the sink, sent or in flight), and its executor JVM is killed
 * with SIGKILL; Spark reruns the task elsewhere and the write must still succeed. Prints `PROBE` lines, one of them
 * the share of the quota each successful write task's executor started its paces at (the sink's `paceStartShare`).
 */
object SinkExecutorKillProbe {
  private val HeldPartition = 1

  def main(args: Array[String]): Unit = {
    val Array(endpoint, stream, work, count, partitions) = args
    val (n, parts) = (count.toLong, partitions.toInt)
    val held = Paths.get(work, "held")
    val heldFile = held.toString // a Path is not serializable: the tasks get the name
    val spark = SparkSession.builder().getOrCreate()
    import spark.implicits._
    val shares = new ConcurrentLinkedQueue[String]()
    val shareName = new PaceStartShareMetric().description() // a custom metric's accumulator bears its description
    spark.sparkContext.addSparkListener(new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = if (end.reason == Success) {
        end.taskInfo.accumulables.filter(_.name.contains(shareName)).foreach(_.update.foreach(v => shares.add(v.toString)))
      }
    })
    try {
      val deadline = System.nanoTime() + 60L * 1000000000L
      while (spark.sparkContext.statusTracker.getExecutorInfos.length < 3) { // the driver counts as one
        require(System.nanoTime() < deadline, "two executors did not register within 60 s")
        Thread.sleep(100)
      }
      val perPartition = n / parts
      val rows = spark.range(0, n, 1, parts).as[Long].mapPartitions { ids =>
        val context = TaskContext.get()
        val holding = context.partitionId() == HeldPartition && context.attemptNumber() == 0
        ids.map { id =>
          if (holding && id == HeldPartition * perPartition + perPartition / 2) {
            Files.write(Paths.get(heldFile), ProcessHandle.current().pid().toString.getBytes(UTF_8))
            // Killed here; the limit only keeps a probe whose kill failed from hanging the test.
            val until = System.nanoTime() + 120L * 1000000000L
            while (System.nanoTime() < until) Thread.sleep(100)
          }
          (s"key-${id % 13}", id.toString)
        }
      }.toDF("partitionKey", "data")
      val writing = Future(rows.write.format("kinesis").mode("append").options(Map("streamName" -> stream,
        "endpoint" -> endpoint, "region" -> "us-east-1", "awsAccessKey" -> "test", "awsSecretKey" -> "test",
        // Small requests: the rows the held task took before the kill are in the stream, so its rerun repeats them.
        "maxRecordsPerRequest" -> "50")).save())(
        ExecutionContext.global)
      while (!Files.exists(held)) {
        require(!writing.isCompleted, s"the write ended before partition $HeldPartition was held: ${writing.value}")
        Thread.sleep(100)
      }
      val pid = Files.readString(held, UTF_8).trim
      new ProcessBuilder("kill", "-KILL", pid).start().waitFor()
      println(s"PROBE killed executor pid=$pid holding partition $HeldPartition")
      Await.result(writing, 5.minutes)
      println(s"PROBE write done partitions=$parts perPartition=$perPartition heldPartition=$HeldPartition")
      // The listener bus is asynchronous: the write's last task ends may still be on their way.
      val heard = System.nanoTime() + 30L * 1000000000L
      while (shares.size < parts && System.nanoTime() < heard) Thread.sleep(50)
      println(s"PROBE paceStartShare=${shares.asScala.mkString(",")}")
    } finally spark.stop()
  }
}
