package io.github.sparkkinesis.it

import java.io.File
import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}
import java.time.Duration
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

/**
 * A real HTTP proxy process (proxy.py, installed into .venv from python/requirements-dev.txt) on 127.0.0.1 and a
 * free port, with Basic authentication when `credentials` are given. Its plugin (integration-tests/src/test/proxy)
 * logs every request it lets through, so a test sees what went through it while the SDK's connections stay open.
 */
final class HttpProxy private (val port: Int, dir: Path, process: Process) extends AutoCloseable {
  val host = "127.0.0.1"

  /** The proxy's whole log: its own lines and the plugin's. */
  def log: String = Files.readString(dir.resolve("proxy.log"), UTF_8)

  /**
   * What the proxy let through, oldest first: `POST 127.0.0.1:4567/ Kinesis_20131202.GetRecords` for a call it
   * forwarded, `CONNECT 127.0.0.1:4567 -` for a tunnel it opened.
   */
  def requests: Seq[String] =
    log.linesIterator.flatMap(l => l.indexOf(" - request ") match {
      case -1 => None
      case at => Some(l.substring(at + " - request ".length).trim)
    }).toSeq

  /** The requests to `endpoint` (its host and port), by the call's X-Amz-Target or the CONNECT. */
  def requestsTo(endpoint: URI): Seq[String] = {
    val target = s"${endpoint.getHost}:${endpoint.getPort}"
    requests.filter(r => r.split(' ').lift(1).exists(_.startsWith(target)))
  }

  override def close(): Unit = {
    process.descendants().forEach(p => { p.destroy(); () })
    process.destroy()
    if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly()
  }
}

object HttpProxy {
  private def executable: File = {
    val proxy = new File(TestEnv.repoRoot, ".venv/bin/proxy")
    require(proxy.canExecute, s"$proxy is missing: 'make test' installs proxy.py with python/requirements-dev.txt " +
      "(make .venv/.installed does it alone)")
    proxy
  }

  def start(credentials: Option[(String, String)] = None): HttpProxy = {
    val dir = TempDirs.create("http-proxy-")
    val portFile = dir.resolve("port")
    val command = Seq(executable.getPath, "--hostname", "127.0.0.1", "--port", "0", "--port-file", portFile.toString,
      "--num-acceptors", "1", "--num-workers", "1", "--log-file", dir.resolve("proxy.log").toString,
      "--plugins", "request_log.RequestLogPlugin") ++
      credentials.toSeq.flatMap { case (user, password) => Seq("--basic-auth", s"$user:$password") }
    val builder = new ProcessBuilder(command.asJava).redirectErrorStream(true)
      .redirectOutput(dir.resolve("proxy.out").toFile)
    builder.environment().put("PYTHONPATH", new File(TestEnv.repoRoot, "integration-tests/src/test/proxy").getPath)
    val process = builder.start()
    def started = Files.exists(portFile) && Files.readString(portFile, UTF_8).trim.nonEmpty
    try Wait.until(s"proxy.py to listen (its output: ${dir.resolve("proxy.out")})", Duration.ofSeconds(30)) {
        require(process.isAlive || started, s"proxy.py exited: ${Files.readString(dir.resolve("proxy.out"), UTF_8)}")
        started
      }
    catch { case e: Throwable => process.destroyForcibly(); throw e }
    new HttpProxy(Files.readString(portFile, UTF_8).trim.linesIterator.next().trim.toInt, dir, process)
  }
}
