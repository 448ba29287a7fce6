package io.github.sparkkinesis.client

import java.net.URI
import java.util.Locale
import java.util.regex.Pattern

/**
 * The HTTP proxy a job names with options (`proxyHost`, `proxyPort`, `proxyUsername`, `proxyPassword`) and the hosts
 * reached without it (`nonProxyHosts`). Without `proxyHost`, each JVM's own proxy properties apply
 * ([[ProxyConfig.resolve]]), as they would for any Java HTTP client there: a driver and its executors may be
 * configured apart (`spark.driver.extraJavaOptions`, `spark.executor.extraJavaOptions`).
 */
final case class ProxyOptions(server: Option[ProxyServer], nonProxyHosts: Option[Seq[String]])

object ProxyOptions {
  val none: ProxyOptions = ProxyOptions(None, None)
}

/** A proxy server and its Basic credentials. `toString` never shows the password: it reaches logs and messages. */
final case class ProxyServer(host: String, port: Int, username: Option[String], password: Option[String]) {
  override def toString: String =
    s"ProxyServer($host:$port, username=${username.getOrElse("none")}, password=${password.map(_ => "***")})"
}

/**
 * The proxy one client goes through, resolved for the scheme of the endpoint it calls.
 *
 * @param origin what named it, for messages: `proxyHost`, or the JVM property (`https.proxyHost`)
 * @param nonProxyHosts the patterns as given (`*` a wildcard), matched case-insensitively against the whole host
 */
final case class ProxyConfig(server: ProxyServer, nonProxyHosts: Seq[String], origin: String) {
  def address: String = s"${server.host}:${server.port}"

  /** The patterns as the SDK's HTTP clients take them: regular expressions matched against the whole host. */
  def nonProxyHostRegexes: Set[String] = nonProxyHosts.map(ProxyConfig.regex).toSet

  def bypasses(host: String): Boolean = nonProxyHostRegexes.exists(r => host.matches(r))

  /** The credential settings a 407 answer points at. */
  def credentialKeys: String =
    if (origin == ProxyConfig.HostOption) "proxyUsername and proxyPassword"
    else origin.replace("proxyHost", "proxyUser") + " and " + origin.replace("proxyHost", "proxyPassword")
}

object ProxyConfig {
  val HostOption = "proxyHost"

  /**
   * What the JDK's own proxy selector skips when `http.nonProxyHosts` is unset: the loopback addresses. A job that
   * sets only `-Dhttps.proxyHost` gets what every other Java client of that JVM gets.
   */
  val JvmDefaultNonProxyHosts: Seq[String] = Seq("localhost", "127.*", "[::1]", "0.0.0.0", "[::0]")

  /** `nonProxyHosts` as the option and the JVM property write it: patterns separated by `|` (or `,`). */
  def parseHosts(value: String): Seq[String] = value.split("[|,]").map(_.trim).toSeq

  /** A pattern (`*` anywhere stands for any characters) as a regular expression, case-insensitive. */
  def regex(pattern: String): String =
    "(?i)" + pattern.toLowerCase(Locale.ROOT).split("\\*", -1).map(p => if (p.isEmpty) "" else Pattern.quote(p))
      .mkString(".*")

  /**
   * The proxy for a client calling `target` (an endpoint URL; None: the region's endpoint, https), or None to call
   * it directly. With `proxyHost`, the options are the whole configuration; without it, this JVM's properties by the
   * target's scheme, as the JDK reads them: `https.proxyHost` / `https.proxyPort` (default 443) for https,
   * `http.proxyHost` / `http.proxyPort` (default 80) for http, credentials from `<scheme>.proxyUser` /
   * `<scheme>.proxyPassword` (the AWS SDK's names), hosts to skip from `http.nonProxyHosts` (the JDK's default when
   * unset). `nonProxyHosts` replaces the hosts to skip in both cases.
   *
   * @param property this JVM's system properties (a parameter for tests)
   */
  def resolve(
      options: ProxyOptions,
      target: Option[URI],
      property: String => Option[String] = k => Option(System.getProperty(k))): Option[ProxyConfig] = {
    val scheme = target.flatMap(u => Option(u.getScheme)).map(_.toLowerCase(Locale.ROOT)).getOrElse("https")
    def prop(name: String) = property(s"$scheme.$name").map(_.trim).filter(_.nonEmpty)
    def fromJvm: Option[ProxyConfig] =
      prop("proxyHost").map { host =>
        val port = prop("proxyPort").flatMap(p => scala.util.Try(p.toInt).toOption).filter(p => p > 0 && p < 65536)
          .getOrElse(if (scheme == "http") 80 else 443)
        val skip = property("http.nonProxyHosts").map(parseHosts).getOrElse(JvmDefaultNonProxyHosts)
        ProxyConfig(ProxyServer(host, port, prop("proxyUser"), prop("proxyPassword")), skip, s"$scheme.proxyHost")
      }
    val chosen = options.server.map(s => ProxyConfig(s, Nil, HostOption)).orElse(fromJvm)
    val configured = chosen.map(c => options.nonProxyHosts.fold(c)(hosts => c.copy(nonProxyHosts = hosts)))
    configured.filterNot(c => target.flatMap(u => Option(u.getHost)).exists(c.bypasses))
  }
}
