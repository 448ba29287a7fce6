package io.github.sparkkinesis.client

import java.net.URI

import org.scalatest.funsuite.AnyFunSuite

/** Which proxy a client calling an endpoint goes through: the options, else the JVM's properties as the JDK reads them. */
class ProxyConfigSuite extends AnyFunSuite {
  private val server = ProxyServer("proxy.example.com", 3128, Some("u"), Some("pw"))
  private val aws = None // the region's endpoint: https
  private val local = Some(URI.create("http://127.0.0.1:4566"))

  private def resolve(options: ProxyOptions, target: Option[URI], props: (String, String)*) =
    ProxyConfig.resolve(options, target, props.toMap.get)

  test("the options are the whole configuration: no host skipped unless nonProxyHosts says") {
    assert(resolve(ProxyOptions(Some(server), None), local, "http.nonProxyHosts" -> "127.*") ==
      Some(ProxyConfig(server, Nil, "proxyHost")))
    assert(resolve(ProxyOptions(Some(server), Some(Seq("127.0.0.*"))), local).isEmpty)
    assert(resolve(ProxyOptions(Some(server), Some(Seq("*.internal"))), aws).map(_.nonProxyHosts)
      .contains(Seq("*.internal")))
  }

  test("without options, the properties of the endpoint's scheme, with the JDK's default ports") {
    val https = resolve(ProxyOptions.none, aws, "https.proxyHost" -> "corp", "http.proxyHost" -> "other")
    assert(https.map(p => (p.address, p.origin)).contains(("corp:443", "https.proxyHost")))
    assert(resolve(ProxyOptions.none, aws, "http.proxyHost" -> "other").isEmpty, "http.proxyHost is for http endpoints")
    val http = resolve(
      ProxyOptions.none,
      Some(URI.create("http://kinesis.internal:80")),
      "http.proxyHost" -> "corp",
      "http.proxyPort" -> "8080",
      "http.proxyUser" -> "u",
      "http.proxyPassword" -> "pw"
    )
    assert(http.map(_.server).contains(ProxyServer("corp", 8080, Some("u"), Some("pw"))))
    assert(http.map(_.credentialKeys).contains("http.proxyUser and http.proxyPassword"))
    assert(resolve(ProxyOptions.none, aws).isEmpty)
  }

  test("loopback is skipped by default, as the JDK does, unless http.nonProxyHosts or nonProxyHosts says otherwise") {
    assert(resolve(ProxyOptions.none, local, "http.proxyHost" -> "corp").isEmpty)
    assert(resolve(ProxyOptions.none, local, "http.proxyHost" -> "corp", "http.nonProxyHosts" -> "none.invalid")
      .nonEmpty)
    assert(resolve(ProxyOptions(None, Some(Seq("other"))), local, "http.proxyHost" -> "corp").nonEmpty)
  }

  test("patterns: * anywhere, case-insensitive, whole host, dots literal") {
    val p = ProxyConfig(server, Seq("*.Internal", "10.*", "[::1]", "exact.host"), "proxyHost")
    for (h <- Seq("kinesis.internal", "A.B.INTERNAL", "10.1.2.3", "[::1]", "exact.host")) assert(p.bypasses(h), h)
    for (h <- Seq("internal.com", "100.1.2.3", "exactxhost", "exact.host.com", "110.0.0.1")) assert(!p.bypasses(h), h)
  }

  test("the password never shows in the printed configuration") {
    val printed = Seq(
      server.toString,
      ProxyConfig(server, Nil, "proxyHost").toString,
      ConnectionConfig.default.copy(proxy = ProxyOptions(Some(server), None)).toString)
    for (p <- printed) assert(!p.contains("pw") && p.contains("proxy.example.com:3128"), p)
  }

  test("a refusal names the proxy and the settings to fix, never the password") {
    val p = ProxyConfig(server, Nil, "proxyHost")
    assert(ProxyRefusals.wrongCredentials("ListShards", p) == "ListShards was refused by the HTTP proxy " +
      "proxy.example.com:3128 (from proxyHost) with 407 Proxy Authentication Required: it did not accept the " +
      "credentials; check proxyUsername and proxyPassword.")
    val jvm = ProxyConfig(server.copy(username = None, password = None), Nil, "https.proxyHost")
    assert(ProxyRefusals.missingCredentials("PutRecords", jvm).endsWith("it asks for credentials; set " +
      "https.proxyUser and https.proxyPassword."))
    assert(ProxyRefusals.tunnelRefused(new RuntimeException(new java.io.IOException("Could not connect to proxy"))))
    assert(!ProxyRefusals.tunnelRefused(new java.io.IOException("Connection refused")))
  }
}
