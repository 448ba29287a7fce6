package io.github.sparkkinesis.it

import java.io.File
import java.net.URI

import scala.sys.process._

/**
 * A Kinesis endpoint for one test suite: kinesis-mock started as a local process by the launcher in
 * `localstack/`, or the endpoint named by KINESIS_ENDPOINT (LocalStack, real AWS), which is then left alone.
 */
final class KinesisEmulator private (val endpoint: URI, stateDir: Option[File]) extends AutoCloseable {
  override def close(): Unit = stateDir.foreach { dir =>
    val exit = Seq(KinesisEmulator.launcher.getPath, "stop", "--state-dir", dir.getPath).!
    require(exit == 0, s"kinesis-mock stop exited with $exit")
  }
}

object KinesisEmulator {
  private def launcher: File = new File(TestEnv.repoRoot, "localstack/kinesis-mock")

  def start(): KinesisEmulator = sys.env.get("KINESIS_ENDPOINT").filter(_.nonEmpty) match {
    case Some(endpoint) => new KinesisEmulator(URI.create(endpoint), None)
    case None =>
      val dir = TempDirs.create("kinesis-mock-").toFile
      val err = new StringBuilder
      val out = try Seq(launcher.getPath, "start", "--state-dir", dir.getPath).!!(ProcessLogger(l => err.append(l).append('\n')))
        catch { case e: RuntimeException => throw new IllegalStateException(s"kinesis-mock did not start: $err", e) }
      new KinesisEmulator(URI.create(out.trim.linesIterator.toSeq.last), Some(dir))
  }
}
