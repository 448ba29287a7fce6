package io.github.sparkkinesis.simulator

import java.util.concurrent.CountDownLatch

/**
 * `java -jar kinesis-simulator.jar [--port P] [--quotas on|off] [--quota-factor F] [--iterator-expiry-ms N]
 * [--retention-ms N] [--seed S] [--threads T] [--auth-keys ID=SECRET,...] [--clock-offset-ms N]
 * [--split-end-answer true|false]` — runs until TERM. Everything but the port and the threads can also be changed at
 * runtime through the admin API. `--clock-offset-ms` may be negative (Kinesis' clock behind the client's).
 */
object Main {
  private val usage =
    "usage: kinesis-simulator [--port P] [--quotas on|off] [--quota-factor F] [--iterator-expiry-ms N] " +
      "[--retention-ms N] [--seed S] [--threads T] [--auth-keys ID=SECRET,...] [--clock-offset-ms N] " +
      "[--split-end-answer true|false]"

  def main(args: Array[String]): Unit = {
    val options = args.grouped(2).map {
      case Array(k, v) if k.startsWith("--") => k.drop(2) -> v
      case other => fail(s"bad argument(s) ${other.mkString(" ")}")
    }.toMap
    val known = Set("port", "quotas", "quota-factor", "iterator-expiry-ms", "retention-ms", "seed", "threads",
      "auth-keys", "clock-offset-ms", "split-end-answer")
    options.keys.filterNot(known).foreach(k => fail(s"unknown option --$k"))
    def long(k: String) = options.get(k).map(v => v.toLongOption.getOrElse(fail(s"--$k needs a number, got $v")))

    val quotasOn = options.get("quotas").map {
      case "on" => true
      case "off" => false
      case v => fail(s"--quotas is on or off, got $v")
    }.getOrElse(true)
    val splitEnd = options.get("split-end-answer").map(v => v.toBooleanOption.getOrElse(
      fail(s"--split-end-answer is true or false, got $v"))).getOrElse(false)
    val factor = options.get("quota-factor").map(v => v.toDoubleOption.getOrElse(fail(s"--quota-factor needs a number, got $v")))
    val settings = Settings(
      quotas = QuotaSettings(enabled = quotasOn, factor = factor.getOrElse(1.0)),
      iteratorExpiryMillis = long("iterator-expiry-ms").getOrElse(Settings.DefaultIteratorExpiryMillis),
      retentionMillis = long("retention-ms"),
      clockOffsetMs = long("clock-offset-ms").getOrElse(0L),
      splitEndAnswer = splitEnd)
    val simulator = new Simulator(settings, long("seed").getOrElse(0L))
    simulator.auth = options.get("auth-keys").map(k => try Auth.parse(k) catch { case e: IllegalArgumentException => fail(e.getMessage) })
    val server = SimulatorServer.start(simulator,
      long("port").getOrElse(0L).toInt, long("threads").getOrElse(2L).toInt)
    val stopped = new CountDownLatch(1)
    Runtime.getRuntime.addShutdownHook(new Thread(() => { server.close(); stopped.countDown() }))
    println(s"kinesis-simulator listening on ${server.endpoint}")
    stopped.await()
  }

  private def fail(message: String): Nothing = {
    System.err.println(s"kinesis-simulator: $message\n$usage")
    sys.exit(2)
  }
}
