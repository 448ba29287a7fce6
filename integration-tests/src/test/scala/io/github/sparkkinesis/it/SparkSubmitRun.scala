package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}
import java.time.Duration
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

/**
 * A separate driver JVM: PySpark's own spark-submit running a main class of the test jar, the connector's shaded jar
 * on `--jars`, its output in `log`. `bin/spark-submit` execs the JVM, so the process is the driver itself.
 */
final class SparkSubmitRun private (process: Process, val log: Path) {
  def isAlive: Boolean = process.isAlive

  def lines: Seq[String] = if (Files.exists(log)) Files.readAllLines(log, UTF_8).asScala.toSeq else Nil

  /** The log's last lines, INFO left out, to explain a failure. */
  def context: String =
    s"\n--- spark-submit output ($log) ---\n${lines.filterNot(_.contains(" INFO ")).takeRight(60).mkString("\n")}"

  /** SIGKILL: no shutdown hook, no cleanup, exactly what a crashed or OOM-killed driver leaves behind. */
  def kill(): Int = {
    new ProcessBuilder("kill", "-KILL", process.pid().toString).start().waitFor()
    process.waitFor()
  }

  def awaitExit(timeout: Duration): Int = {
    if (!process.waitFor(timeout.toMillis, TimeUnit.MILLISECONDS)) {
      process.destroyForcibly()
      throw new AssertionError(s"spark-submit did not finish within $timeout$context")
    }
    process.exitValue()
  }
}

object SparkSubmitRun {
  def start(log: Path, master: String, mainClass: Class[_], args: Seq[String]): SparkSubmitRun = {
    val command = Seq(TestEnv.sparkSubmit.getPath, "--master", master, "--jars", TestEnv.assemblyJar.getPath,
      "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
      "--class", mainClass.getName.stripSuffix("$"), TestEnv.probeJar.getPath) ++ args
    val process = new ProcessBuilder(command.asJava).redirectErrorStream(true).redirectOutput(log.toFile).start()
    new SparkSubmitRun(process, log)
  }
}
