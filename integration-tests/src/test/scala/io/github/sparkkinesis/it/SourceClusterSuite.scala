package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * The source on `local-cluster[2,1,1024]` (two executor JVMs, PySpark's own Spark): each shard is read where it was
 * prefetched, so no range is read twice from Kinesis; then one executor is killed with SIGKILL mid-query and
 * nothing is lost or read twice; when the query stops, both executors free its buffers.
 */
class SourceClusterSuite extends AnyFunSuite with SimulatorSuite {
  private val perWave = 1500

  test("two executors: batches read what their executor prefetched; one executor killed: no loss, no duplicate") {
    val stream = TestKinesis.freshName("cluster")
    simulatorKinesis.createStream(stream, 4)
    val work = TempDirs.create("source-cluster-")
    val command = Seq(
      TestEnv.sparkSubmit.getPath,
      "--master", "local-cluster[2,1,1024]",
      "--jars", TestEnv.assemblyJar.getPath,
      "--conf", "spark.ui.enabled=false",
      "--conf", "spark.sql.shuffle.partitions=2",
      "--class", "io.github.sparkkinesis.it.EngineClusterProbe",
      TestEnv.probeJar.getPath,
      simulator.endpoint.toString, stream, work.resolve("checkpoint").toString, perWave.toString)
    val log = work.resolve("spark-submit.log")
    val process = new ProcessBuilder(command.asJava).redirectErrorStream(true).redirectOutput(log.toFile).start()
    val finished = process.waitFor(8, TimeUnit.MINUTES)
    if (!finished) process.destroyForcibly()
    val output = Files.readAllLines(log, UTF_8).asScala.toSeq
    def context = s"\n--- spark-submit output ($log) ---\n${output.filter(l => !l.contains(" INFO ")).takeRight(80).mkString("\n")}"
    assert(finished, s"spark-submit did not finish within 8 minutes$context")
    assert(process.exitValue() == 0, s"spark-submit exited with ${process.exitValue()}$context")
    val report = output.find(_.startsWith("PROBE killed=")).getOrElse(fail(s"no report$context"))
    def field(name: String) = report.split(' ').collectFirst { case kv if kv.startsWith(s"$name=") => kv.drop(name.length + 1) }
      .getOrElse(fail(s"no $name= in '$report'"))
    assert(field("reReadsBeforeKill") == "0", s"ranges were read twice from Kinesis before any executor was lost: $report")
    // The simulator's own count: each record stored was served about once (a batch task placed away from the
    // executor that fetched its shards would read them all a second time).
    assert(field("servedBeforeKill").toLong <= field("storedBeforeKill").toLong * 105 / 100, report)
    assert(field("storedBeforeKill").toLong >= perWave, report)
    // Unused feeds are dropped after 30 s anyway; a stopping query frees its executors' buffers at once.
    assert(field("freedSeconds").toDouble < 20, s"the stopped query's buffers were not freed promptly: $report")
    assert(field("distinctData").toInt == 2 * perWave, s"records lost: $report")
    assert(field("read") == field("distinctPositions"), s"a record was read twice: $report")
  }
}
