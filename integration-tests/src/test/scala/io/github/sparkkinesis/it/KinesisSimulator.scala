package io.github.sparkkinesis.it

import java.io.File
import java.net.URI

import scala.sys.process._

import io.github.sparkkinesis.simulator.SimulatorAdmin

/**
 * The project's Kinesis simulator (localstack/simulator) for one test suite, started from the jar the same sbt run
 * built, by the launcher `make simulator-up` uses. Unlike kinesis-mock it enforces AWS's quotas (on by default,
 * see `options`) and injects faults on demand through `admin`.
 *
 * @param options the simulator's command-line options, e.g. Seq("--quotas", "off") or Seq("--quota-factor", "0.1")
 */
final class KinesisSimulator private (val endpoint: URI, stateDir: File) extends AutoCloseable {
  lazy val admin: SimulatorAdmin = new SimulatorAdmin(endpoint)

  /**
   * Stops this simulator and starts another on the same port and state directory, as an operator restarting it
   * would. The simulator keeps streams in memory only: the new one starts empty.
   */
  def restart(options: Seq[String] = Nil): KinesisSimulator = {
    close()
    KinesisSimulator.start(options ++ Seq("--port", endpoint.getPort.toString), Some(stateDir))
  }

  override def close(): Unit = {
    val exit = Seq(KinesisSimulator.launcher.getPath, "stop", "--state-dir", stateDir.getPath).!
    require(exit == 0, s"kinesis-simulator stop exited with $exit")
  }
}

object KinesisSimulator {
  private def launcher: File = new File(TestEnv.repoRoot, "localstack/kinesis-simulator")

  lazy val jar: File = new File(sys.props.getOrElse("sparkkinesis.simulatorJar", throw new IllegalStateException(
    "system property sparkkinesis.simulatorJar is not set: run the integration tests through sbt (make test)")))

  def start(options: Seq[String] = Nil, stateDir: Option[File] = None): KinesisSimulator = {
    val dir = stateDir.getOrElse(TempDirs.create("kinesis-simulator-").toFile)
    val err = new StringBuilder
    val command = Process(Seq(launcher.getPath, "start", "--state-dir", dir.getPath) ++ options, None,
      "KINESIS_SIMULATOR_JAR" -> jar.getPath)
    val out = try command.!!(ProcessLogger(l => err.append(l).append('\n')))
      catch { case e: RuntimeException => throw new IllegalStateException(s"kinesis-simulator did not start: $err", e) }
    new KinesisSimulator(URI.create(out.trim.linesIterator.toSeq.last), dir)
  }
}
