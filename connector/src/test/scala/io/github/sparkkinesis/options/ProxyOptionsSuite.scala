package io.github.sparkkinesis.options

import io.github.sparkkinesis.client.{ProxyOptions, ProxyServer}
import org.scalatest.funsuite.AnyFunSuite

/** The proxy options as the connection reads them: what each becomes, and every refusal's message. */
class ProxyOptionsSuite extends AnyFunSuite {
  private val stream = "streamName" -> "s"
  private def proxy(kv: (String, String)*): ProxyOptions = OptionReader((kv :+ stream).toMap).connection.proxy
  private def error(kv: (String, String)*): String =
    intercept[KinesisOptionException](proxy(kv: _*)).getMessage

  private val server = Seq("proxyHost" -> "proxy.example.com", "proxyPort" -> "3128")

  test("no option: no proxy of ours (the JVM's properties decide, in each JVM)") {
    assert(proxy() == ProxyOptions.none)
  }

  test("host, port and credentials; nonProxyHosts split on | or ,") {
    assert(proxy(server: _*) == ProxyOptions(Some(ProxyServer("proxy.example.com", 3128, None, None)), None))
    assert(proxy(server ++ Seq("proxyUsername" -> "u", "proxyPassword" -> "p"): _*).server
      .contains(ProxyServer("proxy.example.com", 3128, Some("u"), Some("p"))))
    assert(proxy("proxyHost" -> "[::1]", "proxyPort" -> "8080").server.map(_.host).contains("[::1]"))
    assert(proxy("nonProxyHosts" -> "localhost| *.internal ,10.*").nonProxyHosts
      .contains(Seq("localhost", "*.internal", "10.*")))
  }

  test("a bad host or port names the option, the value and the form accepted") {
    assert(error("proxyHost" -> "http://proxy:3128", "proxyPort" -> "3128") == "Invalid value 'http://proxy:3128' " +
      "for option 'proxyHost': expected a host name or IP address such as proxy.example.com, 10.0.0.5 or [::1], " +
      "without scheme or port (the port goes in proxyPort).")
    assert(error("proxyHost" -> "proxy", "proxyPort" -> "70000") ==
      "Invalid value '70000' for option 'proxyPort': expected an integer in 1..65535.")
    assert(error("nonProxyHosts" -> "a||b").startsWith("Invalid value 'a||b' for option 'nonProxyHosts': expected " +
      "host patterns separated by | or ,"))
  }

  test("options that need another one say which") {
    assert(error("proxyHost" -> "proxy") ==
      "Option 'proxyHost' is set but 'proxyPort' is not: set the proxy's port (1..65535).")
    assert(error(server :+ ("proxyUsername" -> "u"): _*) == "Option 'proxyUsername' is set but 'proxyPassword' is " +
      "not: set both, or neither for a proxy without authentication.")
    assert(error(server :+ ("proxyPassword" -> "s3cr3t"): _*) == "Option 'proxyPassword' is set but 'proxyUsername' " +
      "is not: set both, or neither for a proxy without authentication.")
    for (key <- Seq("proxyPort", "proxyUsername", "proxyPassword")) {
      assert(error(key -> "3128") == s"Option '$key' only applies with 'proxyHost': set 'proxyHost' or remove it " +
        "(without proxyHost, the JVM's proxy properties apply, with their own credentials).")
    }
  }

  test("the password is a secret: masked in messages and printed options") {
    val msg = error("proxyHost" -> "proxy", "proxyPort" -> "1", "proxyUsername" -> "u", "proxyPassword" -> "")
    assert(msg.contains("'proxyUsername' is set but 'proxyPassword' is not"))
    assert(KinesisOptions.isSecret("proxyPassword") && KinesisOptions.isSecret("PROXYPASSWORD"))
    assert(OptionReader.redact(Map("proxyPassword" -> "s3cr3t")) == Map("proxyPassword" -> "***"))
    assert(!proxy(server ++ Seq("proxyUsername" -> "u", "proxyPassword" -> "s3cr3t"): _*).toString.contains("s3cr3t"))
  }

  test("the AWS Labs keys: proxyAddress is proxyHost (port 443 unless given), the others are ours") {
    assert(proxy("proxyAddress" -> "proxy.example.com").server
      .contains(ProxyServer("proxy.example.com", 443, None, None)))
    assert(proxy(
      "proxyAddress" -> "proxy.example.com",
      "proxyPort" -> "3128",
      "proxyUsername" -> "u",
      "proxyPassword" -> "p").server.contains(ProxyServer("proxy.example.com", 3128, Some("u"), Some("p"))))
    val sink = OptionReader.forSink(Map("kinesis.streamName" -> "s", "proxyAddress" -> "p.example.com")).connection
    assert(sink.proxy.server.map(s => (s.host, s.port)).contains(("p.example.com", 443)))
    // A message about a value the job gave through proxyAddress names proxyAddress.
    assert(error("proxyAddress" -> "http://p", "proxyPort" -> "1").startsWith("Invalid value 'http://p' for option " +
      "'proxyAddress': expected a host name"))
    assert(error("proxyAddress" -> "p", "proxyUsername" -> "u") == "Option 'proxyUsername' is set but " +
      "'proxyPassword' is not: set both, or neither for a proxy without authentication.")
    assert(error("proxyAddress" -> "a.example.com", "proxyHost" -> "b.example.com", "proxyPort" -> "1") ==
      "Options 'proxyHost' ('b.example.com') and 'proxyAddress' ('a.example.com') say different things: keep one.")
  }
}
