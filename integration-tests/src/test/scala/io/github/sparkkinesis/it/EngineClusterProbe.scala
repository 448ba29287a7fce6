package io.github.sparkkinesis.it

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.SparkEnv
import org.apache.spark.sql.{DataFrame, SparkSession}
import io.github.sparkkinesis.source.executor.Prefetcher

/**
 * Run by SourceClusterSuite through spark-submit on `local-cluster[2,1,1024]`: writes records with the sink, reads
 * them with a streaming query, kills one executor JVM (SIGKILL), writes more, and reports what was read, how
 * many ranges had to be re-read from Kinesis and how many records the simulator served, as `PROBE` lines.
 */
object EngineClusterProbe {
  private def waitFor(what: String, seconds: Int)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + seconds * 1000000000L
    while (!condition) {
      if (System.nanoTime() > deadline) throw new IllegalStateException(s"timed out waiting for $what")
      Thread.sleep(100)
    }
  }

  /** Records the simulator served by GetRecords and stored, over the stream's shards (its admin API). */
  private def recordCounters(endpoint: String, stream: String): (Long, Long) = {
    val request = HttpRequest.newBuilder(URI.create(endpoint).resolve("/_sim/counters")).GET().build()
    val body = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).body()
    val shards = new ObjectMapper().readTree(body).path("streams").path(stream).path("shards")
    val all = shards.elements().asScala.toSeq
    (all.map(_.path("getRecordsRecords").asLong()).sum, all.map(_.path("putRecords").asLong()).sum)
  }

  def main(args: Array[String]): Unit = {
    val Array(endpoint, stream, checkpoint, perWave) = args
    val n = perWave.toInt
    val spark = SparkSession.builder().getOrCreate()
    import spark.implicits._
    val connection = Map("streamName" -> stream, "endpoint" -> endpoint, "region" -> "us-east-1",
      "awsAccessKey" -> "test", "awsSecretKey" -> "test")
    def write(prefix: String): Unit = (1 to n).map(i => (s"key-${i % 50}", s"$prefix-$i")).toDF("partitionKey", "data")
      .repartition(2).write.format("kinesis").options(connection).mode("append").save()
    def executors: Set[String] = spark.sparkContext.statusTracker.getExecutorInfos.map(e => s"${e.host}:${e.port}").toSet
    try {
      waitFor("two executors", 60)(executors.size >= 3) // the driver counts as one
      val rows = new ConcurrentLinkedQueue[String]()
      write("a")
      val query = spark.readStream.format("kinesis").options(connection + ("initialPosition" -> "trim_horizon")).load()
        .selectExpr("concat(shardId, '/', sequenceNumber, '/', subSequenceNumber, ' ', cast(data as string))")
        .writeStream.option("checkpointLocation", checkpoint)
        .foreachBatch((df: DataFrame, _: Long) => { df.as[String].collect().foreach(rows.add); () })
        .start()
      def reReads = query.recentProgress.map(_.sources.head.metrics.asScala.getOrElse("reReadRanges", "0").toLong).sum
      waitFor("the first wave to be read", 180)(rows.size >= n)
      val reReadsBeforeKill = reReads
      val (served, stored) = recordCounters(endpoint, stream)

      var pids = Map.empty[String, Long]
      waitFor("tasks on both executors", 60) {
        pids = spark.sparkContext.parallelize(1 to 16, 16)
          .map(_ => SparkEnv.get.executorId -> ProcessHandle.current().pid()).collect().toMap
        pids.size >= 2
      }
      val (victim, pid) = pids.toSeq.sortBy(_._1).head
      val before = executors
      new ProcessBuilder("kill", "-9", pid.toString).start().waitFor()
      waitFor("the executor loss to be noticed", 60)(!executors.subsetOf(before) || executors.size < before.size)
      write("b")
      waitFor("the second wave to be read", 180)(rows.size >= 2 * n)
      query.stop()
      // Feeds still held by any executor: none once the stopped query's release job ran on both.
      def held = spark.sparkContext.parallelize(1 to 16, 16)
        .map(_ => SparkEnv.get.executorId -> (Prefetcher.feedCount + Prefetcher.heldBytes)).collect().toMap
      val stopped = System.nanoTime()
      waitFor("the executors to free the stopped query's buffers", 60) { val h = held; h.size >= 2 && h.values.forall(_ == 0) }
      val freedSeconds = (System.nanoTime() - stopped) / 1e9
      val all = rows.asScala.toSeq
      println(s"PROBE killed=$victim read=${all.size} distinctPositions=${all.map(_.split(' ')(0)).distinct.size} " +
        s"distinctData=${all.map(_.split(' ')(1)).distinct.size} reReadsBeforeKill=$reReadsBeforeKill reReadsTotal=$reReads " +
        s"servedBeforeKill=$served storedBeforeKill=$stored freedSeconds=$freedSeconds")
    } finally spark.stop()
  }
}
