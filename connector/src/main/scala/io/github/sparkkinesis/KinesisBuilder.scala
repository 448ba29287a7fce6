package io.github.sparkkinesis

import java.util

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.options.{KinesisOption, KinesisOptions, OptionReader}

/**
 * What the source and sink builders share: each `with...` method sets options of the table in
 * [[options.KinesisOptions]], `options()` is exactly the map the builder applies, and builders are immutable.
 * A class, not a trait: trait forwarders lose the generic return type, and Java callers would get the base type.
 */
abstract class KinesisBuilder[B <: KinesisBuilder[B]] {
  import KinesisOptions._

  protected def settings: Map[String, String]
  protected def updated(settings: Map[String, String]): B

  /** Keys are case-insensitive, as Spark matches them: a later setting replaces an earlier one in any case. */
  protected def set(option: KinesisOption, value: Any): B = withOption(option.key, value.toString)

  def withRegion(region: String): B = set(Region, region)
  def withEndpoint(endpoint: String): B = set(Endpoint, endpoint)

  def withCredentials(accessKey: String, secretKey: String): B =
    set(AwsAccessKey, accessKey).set(AwsSecretKey, secretKey)

  def withCredentials(accessKey: String, secretKey: String, sessionToken: String): B =
    withCredentials(accessKey, secretKey).set(AwsSessionToken, sessionToken)

  def withProfile(profile: String): B = set(AwsProfile, profile)
  def withRoleArn(roleArn: String): B = set(RoleArn, roleArn)
  def withRoleArn(roleArn: String, externalId: String): B = set(RoleArn, roleArn).set(RoleExternalId, externalId)

  /**
   * Every call (reads, writes, STS) through the HTTP proxy at `host`:`port` (`proxyHost`, `proxyPort`); without it,
   * each JVM's own proxy properties (`https.proxyHost`, ...) apply.
   */
  def withProxy(host: String, port: Int): B = set(ProxyHost, host).set(ProxyPort, port)

  /** The same, with Basic authentication (`proxyUsername`, and `proxyPassword`, a secret). */
  def withProxy(host: String, port: Int, username: String, password: String): B =
    withProxy(host, port).set(ProxyUsername, username).set(ProxyPassword, password)

  /** Hosts called directly, not through the proxy (`nonProxyHosts`): patterns such as `*.internal,10.*`. */
  def withNonProxyHosts(hosts: String): B = set(NonProxyHosts, hosts)

  /** The retry options (`retryMaxAttempts`, `retryInitialBackoff`, `retryMaxBackoff`), e.g. `RetryStrategies.indefinitely(250)`. */
  def withRetryStrategy(strategy: RetryStrategy): B =
    strategy.options.foldLeft(this.asInstanceOf[B]) { case (b, (k, v)) => b.withOption(k, v) }

  /** Any option of the table, by key. */
  def withOption(key: String, value: String): B =
    updated(settings.filter { case (k, _) => !k.equalsIgnoreCase(key) }.updated(key, value))

  /** The exact options the builder applies. */
  def options(): util.Map[String, String] =
    util.Collections.unmodifiableMap(new util.TreeMap[String, String](settings.asJava))

  override def toString: String = s"${getClass.getSimpleName}(${OptionReader.redact(settings)})"
}
