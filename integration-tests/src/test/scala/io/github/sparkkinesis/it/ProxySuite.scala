package io.github.sparkkinesis.it

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.functions.{col, concat, lit}
import org.scalatest.funsuite.AnyFunSuite

/**
 * Every client through a real HTTP proxy (proxy.py, with Basic authentication) in front of the simulator, which
 * speaks plain HTTP: the sync clients (polling reads, the sink, STS) send it absolute-URI requests, the enhanced
 * fan-out client opens a CONNECT tunnel and speaks HTTP/2 inside it. The proxy's log shows each call it let through.
 */
class ProxySuite extends AnyFunSuite with SimulatorSourceTest {
  private val user = "spark-job"
  private val password = "pr0xy-Pw-7qZ"
  private lazy val proxy = HttpProxy.start(Some(user -> password))
  private lazy val sts = new StsStub

  override protected def afterAll(): Unit =
    try { proxy.close(); sts.close() }
    finally super.afterAll()

  private def viaProxy(pw: String = password, through: HttpProxy = proxy): Seq[(String, String)] = Seq(
    "proxyHost" -> through.host, "proxyPort" -> through.port.toString, "proxyUsername" -> user, "proxyPassword" -> pw)

  /**
   * A proxy of the test's own: the executors of an earlier test's query may still be reading ahead through the
   * suite's proxy for a while, so "nothing went through" is only checked on one nobody else knows.
   */
  private def withOwnProxy(test: HttpProxy => Unit): Unit = {
    val own = HttpProxy.start(Some(user -> password))
    try test(own) finally own.close()
  }

  private def batchRead(stream: String, options: (String, String)*): DataFrame =
    spark.read.format("kinesis").options(Map(
      "streamName" -> stream, "endpoint" -> endpoint.toString, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey,
      "initialPosition" -> "trim_horizon") ++ options).load()

  private def dataOf(df: DataFrame): Seq[String] = df.collect().toSeq.map(r => new String(r.getAs[Array[Byte]]("data"), UTF_8))

  /** The operations (X-Amz-Target's action) the proxy forwarded to `to`, and the tunnels it opened there. */
  private def seen(to: URI, since: Int): Seq[String] =
    proxy.requestsTo(to).drop(since).map(r => r.split(' ') match {
      case Array("CONNECT", _, _*) => "CONNECT"
      case parts => parts.last.split('.').last
    })

  private def filled(n: Int, prefix: String): Seq[(String, String)] = (1 to n).map(i => (s"key-${i % 5}", s"$prefix-$i"))

  test("polling and enhanced fan-out reads, a write and STS all go through the proxy") {
    val stream = newStreamName("proxy-read")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, filled(40, "r"))
    val before = proxy.requestsTo(endpoint).size

    assertExactly(readAvailableNow(kinesisReader(stream, viaProxy() :+ ("initialPosition" -> "trim_horizon"): _*)).records, put)
    val polling = seen(endpoint, before)
    assert(polling.contains("GetRecords") && polling.contains("ListShards"), s"the proxy saw: $polling")

    val subscribed = simulator.admin.operationCounter("SubscribeToShard", "calls")
    val afterPolling = proxy.requestsTo(endpoint).size
    val efo = readAvailableNow(kinesisReader(stream,
      viaProxy() ++ Seq("initialPosition" -> "trim_horizon", "consumerMode" -> "efo"): _*))
    assertExactly(efo.records, put)
    val fanOut = seen(endpoint, afterPolling)
    // The fan-out client's HTTP/2 runs inside the tunnel: the proxy sees the CONNECT, not the subscriptions.
    assert(fanOut.contains("CONNECT") && fanOut.contains("RegisterStreamConsumer"), s"the proxy saw: $fanOut")
    assert(simulator.admin.operationCounter("SubscribeToShard", "calls") > subscribed)

    val copy = newStreamName("proxy-write")
    kinesis.createStream(copy, 1)
    val beforeWrite = proxy.requestsTo(endpoint).size
    val rows = spark.range(0, 25, 1, 2).select(concat(lit("k"), col("id").cast("string")).as("partitionKey"),
      col("id").cast("string").cast("binary").as("data"))
    val role = Seq("roleArn" -> "arn:aws:iam::123456789012:role/writer", "stsEndpoint" -> sts.endpoint.toString)
    rows.write.format("kinesis").mode(SaveMode.Append).options(Map("streamName" -> copy,
      "endpoint" -> endpoint.toString, "region" -> TestEnv.region, "awsAccessKey" -> TestEnv.accessKey,
      "awsSecretKey" -> TestEnv.secretKey) ++ viaProxy() ++ role).save()
    assert(StreamContents.read(kinesis.client, copy).map(_.text.toInt).sorted == (0 until 25))
    assert(seen(endpoint, beforeWrite).contains("PutRecords"), s"the proxy saw: ${seen(endpoint, beforeWrite)}")
    assert(sts.requests.nonEmpty && proxy.requestsTo(sts.endpoint).nonEmpty, "STS was not called through the proxy")
  }

  test("a wrong proxy password fails at once, naming the proxy and the options, never the password") {
    val stream = newStreamName("proxy-refused")
    kinesis.createStream(stream, 1)
    kinesis.putAll(stream, filled(3, "x"))
    val wrong = "wr0ng-Pw-k3Y"
    val hidden = Seq(password, wrong) ++ Seq(password, wrong).map(p => Base64.getEncoder.encodeToString(s"$user:$p".getBytes(UTF_8)))
    val logs = LogCapture.install()
    val failures = try {
      // The simulator's plain HTTP: the proxy answers the request itself. An https endpoint: it refuses the CONNECT
      // before reaching it (nothing listens at port 9 here).
      Seq(endpoint, URI.create("https://127.0.0.1:9")).map { at =>
        val started = System.nanoTime()
        val text = LogCapture.trace(intercept[Exception](dataOf(batchRead(stream, viaProxy(wrong) :+ ("endpoint" -> at.toString): _*))))
        (at, text, (System.nanoTime() - started) / 1000000)
      }
    } finally logs.uninstall()
    for ((at, text, millis) <- failures) {
      assert(text.contains(s"was refused by the HTTP proxy 127.0.0.1:${proxy.port} (from proxyHost) with 407 Proxy " +
        "Authentication Required: it did not accept the credentials; check proxyUsername and proxyPassword."), s"$at: $text")
      assert(millis < 20000, s"$at: the refusal took $millis ms: it was retried")
    }
    val leaks = for (h <- hidden; (where, text) <- failures.map(f => s"the failure at ${f._1}" -> f._2) :+ ("the log" -> logs.text)
      if text.contains(h)) yield s"$where shows '$h'"
    assert(leaks.isEmpty, leaks.mkString("; "))
    assert(logs.size > 0, "nothing was logged: the log check above would prove nothing")
  }

  test("nonProxyHosts: a matching endpoint is called directly") {
    val stream = newStreamName("proxy-bypass")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, filled(5, "b"))
    withOwnProxy { own =>
      // With the wrong password, a call that went through the proxy would fail: this one is made directly.
      val options = viaProxy("not-the-password", own) :+ ("nonProxyHosts" -> "localhost|127.0.0.*")
      assert(dataOf(batchRead(stream, options: _*)).sorted == put.map(_.data).sorted)
      assert(own.requests.isEmpty, s"the proxy saw: ${own.requests}")
    }
  }

  test("without proxyHost, the JVM's http(s).proxyHost properties; loopback skipped unless http.nonProxyHosts says") {
    val stream = newStreamName("proxy-jvm")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, filled(5, "j"))
    withOwnProxy { own =>
      val props = Map("http.proxyHost" -> own.host, "http.proxyPort" -> own.port.toString,
        "http.proxyUser" -> user, "http.proxyPassword" -> password)
      val keys = props.keys.toSeq ++ props.keys.map(_.replace("http.", "https.")) :+ "http.nonProxyHosts"
      val saved = keys.map(k => k -> Option(System.getProperty(k))).toMap
      try {
        props.foreach { case (k, v) => System.setProperty(k, v) }
        // The JDK's default http.nonProxyHosts skips 127.*: the simulator is called directly.
        assert(dataOf(batchRead(stream)).sorted == put.map(_.data).sorted)
        assert(own.requests.isEmpty, s"the proxy saw: ${own.requests}")
        System.setProperty("http.nonProxyHosts", "example.invalid")
        assert(dataOf(batchRead(stream)).sorted == put.map(_.data).sorted)
        assert(own.requestsTo(endpoint).exists(_.endsWith(".GetRecords")), s"the proxy saw: ${own.requests}")
        // The options win over the properties: through the proxy with the options' (wrong) password, refused.
        val text =
          LogCapture.trace(intercept[Exception](dataOf(batchRead(stream, viaProxy("not-the-password", own): _*))))
        assert(text.contains(s"127.0.0.1:${own.port} (from proxyHost)"), text)
        System.setProperty("http.proxyPassword", "not-the-password")
        val fromJvm = LogCapture.trace(intercept[Exception](dataOf(batchRead(stream))))
        assert(fromJvm.contains(s"127.0.0.1:${own.port} (from http.proxyHost) with 407 Proxy Authentication " +
          "Required: it did not accept the credentials; check http.proxyUser and http.proxyPassword."), fromJvm)
        // An https endpoint takes the https.* properties, and tunnels: refused at the CONNECT (nothing at port 9).
        props.foreach { case (k, v) => System.setProperty(k.replace("http.", "https."), v) }
        System.setProperty("https.proxyPassword", "not-the-password")
        val https = LogCapture.trace(intercept[Exception](dataOf(batchRead(stream, "endpoint" -> "https://127.0.0.1:9"))))
        assert(https.contains(s"127.0.0.1:${own.port} (from https.proxyHost) with 407 Proxy Authentication " +
          "Required: it did not accept the credentials; check https.proxyUser and https.proxyPassword."), https)
      } finally saved.foreach { case (k, v) => v.fold(System.clearProperty(k))(System.setProperty(k, _)) }
    }
  }
}
