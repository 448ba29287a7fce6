package io.github.sparkkinesis.client

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite

class ConnectionConfigSuite extends AnyFunSuite {
  private val secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
  private val token = "FQoGZXIvYXdzEXAMPLETOKEN"
  private val accessKey = "AKIAIOSFODNN7EXAMPLE"

  test("no secret appears in the printed form of a configuration") {
    val config = ConnectionConfig.default.copy(
      endpoint = Some(URI.create("http://127.0.0.1:4566")),
      credentials = CredentialsConfig.AssumeRole(
        roleArn = "arn:aws:iam::123456789012:role/reader",
        externalId = Some("external-secret"),
        sessionName = "spark-kinesis",
        stsEndpoint = None,
        base = CredentialsConfig.Static(accessKey, secret, Some(token))
      )
    )
    val printed = config.toString
    for (hidden <- Seq(secret, token, accessKey, "external-secret")) assert(!printed.contains(hidden), printed)
    assert(printed.contains("***MPLE"), "the access key's last four characters tell keys apart")
    assert(printed.contains("arn:aws:iam::123456789012:role/reader"))
  }

  test("configurations that differ only in a secret are different cache keys") {
    val a = ConnectionConfig.default.copy(credentials = CredentialsConfig.Static(accessKey, secret, None))
    val b = ConnectionConfig.default.copy(credentials = CredentialsConfig.Static(accessKey, secret + "x", None))
    assert(a != b)
    assert(a == a.copy())
  }

  test("short access keys are masked entirely") {
    assert(CredentialsConfig.mask("abcd") == "***")
  }
}
