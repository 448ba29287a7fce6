package io.github.sparkkinesis.it

import java.net.{InetSocketAddress, URI, URLDecoder}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import com.sun.net.httpserver.{HttpExchange, HttpServer}

/**
 * A local STS that grants every AssumeRole with fixed credentials, so a test can set `roleArn` and
 * `roleExternalId` and still read and write (the simulator accepts any credentials). It keeps each request's
 * form fields, so a test can check the external id really reached STS.
 */
final class StsStub extends AutoCloseable {
  private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
  private val received = new ConcurrentLinkedQueue[Map[String, String]]()

  server.createContext("/", (exchange: HttpExchange) => {
    val body = new String(exchange.getRequestBody.readAllBytes(), UTF_8)
    received.add(body.split('&').filter(_.contains('=')).map { kv =>
      val Array(k, v) = kv.split("=", 2)
      URLDecoder.decode(k, UTF_8) -> URLDecoder.decode(v, UTF_8)
    }.toMap)
    val answer = StsStub.AssumeRoleResponse.getBytes(UTF_8)
    exchange.getResponseHeaders.set("Content-Type", "text/xml")
    exchange.sendResponseHeaders(200, answer.length)
    exchange.getResponseBody.write(answer)
    exchange.close()
  })
  server.start()

  val endpoint: URI = URI.create(s"http://127.0.0.1:${server.getAddress.getPort}")

  /** The form fields of every request STS received, oldest first. */
  def requests: Seq[Map[String, String]] = received.asScala.toSeq

  override def close(): Unit = server.stop(0)
}

object StsStub {
  private val AssumeRoleResponse =
    """<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
      |  <AssumeRoleResult>
      |    <Credentials>
      |      <AccessKeyId>ASIASTUBASSUMED</AccessKeyId>
      |      <SecretAccessKey>stub-assumed-secret</SecretAccessKey>
      |      <SessionToken>stub-assumed-token</SessionToken>
      |      <Expiration>2099-01-01T00:00:00Z</Expiration>
      |    </Credentials>
      |    <AssumedRoleUser>
      |      <AssumedRoleId>AROASTUB:spark-kinesis</AssumedRoleId>
      |      <Arn>arn:aws:sts::123456789012:assumed-role/stub/spark-kinesis</Arn>
      |    </AssumedRoleUser>
      |  </AssumeRoleResult>
      |  <ResponseMetadata><RequestId>stub</RequestId></ResponseMetadata>
      |</AssumeRoleResponse>""".stripMargin
}
