package io.github.sparkkinesis.it

import java.io.{ByteArrayOutputStream, PrintStream}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.time.Duration

import io.github.sparkkinesis.options.KinesisOptions
import org.apache.spark.SparkInternals
import org.apache.spark.sql.SaveMode
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/**
 * A read and a write with a marker value in every secret option of the table: none of the markers appears in the
 * driver's log (local mode: the executors' too), `explain` output, the SQL tab's plans, the event log, query
 * progress, or the text of any failure. The secrets are in use all along: the assumed role's external id reaches
 * STS (a local stub), every call goes through an HTTP proxy that wants the proxy password, and the records arrive.
 */
class SecretsSuite extends AnyFunSuite with SimulatorSuite with SparkSuite {
  private val eventLogDir = TempDirs.create("secrets-event-log-").toFile
  override protected def sparkConf: Map[String, String] =
    Map("spark.eventLog.enabled" -> "true", "spark.eventLog.dir" -> eventLogDir.toURI.toString,
      "spark.eventLog.compress" -> "false")

  private lazy val sts = new StsStub
  private lazy val proxy = HttpProxy.start(Some("secrets-user" -> markers("proxyPassword")))

  override protected def afterAll(): Unit = try { sts.close(); proxy.close() } finally super.afterAll()

  /** One marker per secret option, taken from the options table so a new secret option is covered at once. */
  private val markers: Map[String, String] =
    KinesisOptions.all.filter(_.secret).map(o => o.key -> s"MARKER${o.key.toUpperCase}X9Q").toMap

  private def options(stream: String): Map[String, String] = markers ++ Map(
    "streamName" -> stream, "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region,
    "roleArn" -> "arn:aws:iam::123456789012:role/reader", "stsEndpoint" -> sts.endpoint.toString,
    "proxyHost" -> proxy.host, "proxyPort" -> proxy.port.toString, "proxyUsername" -> "secrets-user")

  /** What a block printed to stdout (`explain` prints there). */
  private def printed(block: => Unit): String = {
    val out = new ByteArrayOutputStream()
    Console.withOut(new PrintStream(out, true, UTF_8))(block)
    out.toString(UTF_8)
  }

  private def failureText(block: => Unit): String = LogCapture.trace(intercept[Exception](block))

  /** Where a secret shows in `text`, with what surrounds it. */
  private def leaks(where: String, text: String): Seq[String] =
    for ((key, marker) <- markers.toSeq; at = text.indexOf(marker) if at >= 0)
      yield s"the value of '$key' appears in $where: ...${text.slice(at - 200, at + 60)}..."

  test("no secret option's value shows in logs, explain, the SQL tab, the event log, progress or errors") {
    assert(markers.keySet == Set("awsAccessKey", "awsSecretKey", "awsSessionToken", "roleExternalId", "proxyPassword"))
    val from = TestKinesis.freshName("secrets-from")
    val to = TestKinesis.freshName("secrets-to")
    simulatorKinesis.createStream(from, 1)
    simulatorKinesis.createStream(to, 1)
    simulatorKinesis.putAll(from, (1 to 10).map(i => (s"k$i", s"record-$i")))
    val logs = LogCapture.install()
    val seen = new StringBuilder
    try {
      val streaming = spark.readStream.format("kinesis").options(options(from) + ("initialPosition" -> "trim_horizon")).load()
      seen ++= printed(streaming.explain(true))
      val query = streaming.writeStream.format("kinesis").options(options(to))
        .option("checkpointLocation", TempDirs.create("secrets-checkpoint-").toString)
        .trigger(Trigger.AvailableNow()).start()
      assert(query.awaitTermination(Duration.ofMinutes(2).toMillis), "the streaming copy did not finish")
      query.exception.foreach(e => throw e)
      seen ++= printed(query.explain(true)) ++= query.toString
      query.recentProgress.foreach(p => seen ++= p.json)

      val batch = spark.read.format("kinesis").options(options(from) + ("initialPosition" -> "trim_horizon")).load()
      seen ++= printed(batch.explain(true)) ++= batch.queryExecution.toString
      batch.write.format("kinesis").mode(SaveMode.Append).options(options(to)).save()

      seen ++= failureText(spark.read.format("kinesis").options(options("no-such-stream")).load().collect())
      seen ++= failureText(batch.write.format("kinesis").mode(SaveMode.Append).options(options("no-such-stream")).save())
      seen ++= failureText(spark.readStream.format("kinesis").options(options(from) + ("maxRecordsPerFetch" -> "0")).load())
      SparkInternals.drainListeners(spark.sparkContext)
    } finally logs.uninstall()

    // The secrets were in use: the copy went through the assumed role, asked for with the external id.
    assert(StreamContents.read(simulatorKinesis.client, to).map(_.text).sorted ==
      ((1 to 10) ++ (1 to 10)).map(i => s"record-$i").sorted)
    assert(sts.requests.nonEmpty && sts.requests.forall(_.get("ExternalId").contains(markers("roleExternalId"))),
      s"STS did not get the external id: ${sts.requests}")
    assert(proxy.requestsTo(simulator.endpoint).nonEmpty && proxy.requestsTo(sts.endpoint).nonEmpty,
      "the calls did not go through the proxy")

    val sqlTab = SparkInternals.sqlTabText(spark).mkString("\n")
    // Spark 4 rolls event logs: a folder per application.
    val eventLog = Files.walk(eventLogDir.toPath).filter(Files.isRegularFile(_)).toArray.toSeq
      .map(f => Files.readString(f.asInstanceOf[java.nio.file.Path], UTF_8)).mkString("\n")
    // Each place holds what the run did, so an absent marker means masked, not missing.
    assert(sqlTab.contains(from) && eventLog.contains(from) && eventLog.contains("SparkListenerSQLExecutionStart"))
    assert(logs.text.contains(from), "nothing logged about the read")
    val found = leaks("explain output, progress or failures", seen.toString) ++ leaks("the log", logs.text) ++
      leaks("the SQL tab", sqlTab) ++ leaks("the event log", eventLog)
    assert(found.isEmpty, found.mkString("\n"))
  }
}
