package io.github.sparkkinesis.client

import java.net.URI
import java.time.Duration

/** Where and as whom to call Kinesis. A value type: equal configs share one client per JVM. */
final case class ConnectionConfig(
    region: Option[String],
    endpoint: Option[URI],
    credentials: CredentialsConfig,
    retry: RetryConfig,
    timeouts: TimeoutConfig,
    proxy: ProxyOptions = ProxyOptions.none)

object ConnectionConfig {
  val default: ConnectionConfig =
    ConnectionConfig(None, None, CredentialsConfig.DefaultChain, RetryConfig.default, TimeoutConfig.default)
}

/** How the SDK authenticates. `toString` never shows a secret: these values reach logs and error messages. */
sealed trait CredentialsConfig

object CredentialsConfig {
  case object DefaultChain extends CredentialsConfig

  final case class Static(accessKey: String, secretKey: String, sessionToken: Option[String])
    extends CredentialsConfig {
    override def toString: String =
      s"Static(accessKey=${mask(accessKey)}, secretKey=***, sessionToken=${sessionToken.map(_ => "***")})"
  }

  final case class Profile(name: String) extends CredentialsConfig

  /** Assume `roleArn` with STS, authenticating to STS with `base`. */
  final case class AssumeRole(
      roleArn: String,
      externalId: Option[String],
      sessionName: String,
      stsEndpoint: Option[URI],
      base: CredentialsConfig) extends CredentialsConfig {
    override def toString: String =
      s"AssumeRole(roleArn=$roleArn, externalId=${externalId.map(_ => "***")}, sessionName=$sessionName, " +
        s"stsEndpoint=$stsEndpoint, base=$base)"
  }

  /** Keeps just enough of an access key id to tell two apart. */
  def mask(accessKey: String): String =
    if (accessKey.length <= 4) "***" else s"***${accessKey.takeRight(4)}"
}

/**
 * Retries of retryable failures (throttling, 5xx, network errors, timeouts): exponential backoff with full jitter
 * between `initialBackoff` and `maxBackoff`. `maxAttempts = None` retries until the call succeeds.
 */
final case class RetryConfig(maxAttempts: Option[Int], initialBackoff: Duration, maxBackoff: Duration)

object RetryConfig {
  val default: RetryConfig = RetryConfig(None, Duration.ofMillis(100), Duration.ofSeconds(3))
}

/**
 * Explicit HTTP timeouts, so that a hung connection surfaces within seconds instead of the SDK's defaults.
 * `apiCall` bounds one call including its retries (None: bounded by the retry policy alone).
 */
final case class TimeoutConfig(connect: Duration, apiCallAttempt: Duration, apiCall: Option[Duration])

object TimeoutConfig {
  val default: TimeoutConfig = TimeoutConfig(Duration.ofSeconds(10), Duration.ofSeconds(30), None)
}
