package io.github.sparkkinesis.client

import java.util.concurrent.{ConcurrentHashMap, ScheduledExecutorService, ScheduledThreadPoolExecutor}

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.DaemonThreads

import software.amazon.awssdk.auth.credentials._
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.Protocol
import software.amazon.awssdk.http.apache5.{Apache5HttpClient, ProxyConfiguration => ApacheProxy}
import software.amazon.awssdk.http.nio.netty.{
  Http2Configuration,
  NettyNioAsyncHttpClient,
  ProxyConfiguration => NettyProxy
}
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain
import software.amazon.awssdk.retries.api.RetryStrategy
import software.amazon.awssdk.services.kinesis.{KinesisAsyncClient, KinesisClient}
import software.amazon.awssdk.services.kinesis.model.LimitExceededException
import software.amazon.awssdk.services.sts.StsClient
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider
import software.amazon.awssdk.services.sts.model.AssumeRoleRequest

/**
 * The one place that builds AWS clients, for the source and the sink alike. Clients are thread-safe and costly
 * (connection pools, credential refresh), so each JVM keeps one per configuration for its lifetime.
 *
 * Every builder is handed its HTTP client explicitly: the SDK's ServiceLoader lookup of HTTP implementations
 * does not survive relocation inside the shaded jar.
 */
object KinesisClientFactory {
  val FallbackRegion: Region = Region.US_EAST_1
  /**
   * Per sync client, so per JVM and configuration: the source's fetch threads (at most 128 calls in flight,
   * `Prefetcher.callSlots`) and the sink's sender threads (`maxInFlightRequests` per writer task and stream) share
   * it, so a source reading thousands of shards leaves a sink in the same JVM as many connections again.
   */
  private val MaxConnections = 256

  /**
   * A configuration with the proxies it resolves to in this JVM: without `proxyHost` they come from this JVM's
   * properties, which a job may set after a client was built (and tests do).
   */
  private final case class ClientKey(
      config: ConnectionConfig,
      kinesisProxy: Option[ProxyConfig],
      stsProxy: Option[ProxyConfig])

  private def key(config: ConnectionConfig): ClientKey = {
    val sts = config.credentials match {
      case role: CredentialsConfig.AssumeRole => ProxyConfig.resolve(config.proxy, role.stsEndpoint)
      case _ => None
    }
    ClientKey(config, ProxyConfig.resolve(config.proxy, config.endpoint), sts)
  }

  private val syncClients = new ConcurrentHashMap[ClientKey, KinesisClient]()
  private val fanOutClients = new ConcurrentHashMap[ClientKey, KinesisAsyncClient]()
  private val limitFailingClients = new ConcurrentHashMap[ClientKey, KinesisClient]()

  def sync(config: ConnectionConfig): KinesisClient =
    syncClients.computeIfAbsent(key(config), k => newSyncClient(k, retryLimits = true))

  /**
   * A sync client whose calls answer LimitExceededException at once instead of retrying it, for the call where it
   * may also mean a hard limit that no retry lifts (RegisterStreamConsumer: the stream has as many consumers as it
   * allows). Its caller tells that apart from a rate ([[io.github.sparkkinesis.source.ConsumerLimit]]).
   */
  def syncFailingOnLimits(config: ConnectionConfig): KinesisClient =
    limitFailingClients.computeIfAbsent(key(config), k => newSyncClient(k, retryLimits = false))

  /** The client for enhanced fan-out subscriptions (SubscribeToShard): HTTP/2 whatever the endpoint's scheme. */
  def fanOut(config: ConnectionConfig): KinesisAsyncClient =
    fanOutClients.computeIfAbsent(key(config), k => newFanOutClient(k))

  /** The region the clients use: the option, else the AWS default region chain, else us-east-1. */
  def resolveRegion(config: ConnectionConfig): Region =
    config.region.map(Region.of).getOrElse {
      try new DefaultAwsRegionProviderChain().getRegion
      catch { case _: Exception => FallbackRegion }
    }

  private def newSyncClient(key: ClientKey, retryLimits: Boolean): KinesisClient = {
    val config = key.config
    val builder = KinesisClient.builder()
      .httpClientBuilder(Apache5HttpClient.builder()
        .maxConnections(MaxConnections)
        .connectionTimeout(config.timeouts.connect)
        .socketTimeout(config.timeouts.apiCallAttempt)
        .proxyConfiguration(apacheProxy(key.kinesisProxy)))
      .region(resolveRegion(config))
      .credentialsProvider(credentialsProvider(config, config.credentials, key.stsProxy))
      .overrideConfiguration(overrides(config, key.kinesisProxy, retryLimits))
    config.endpoint.foreach(builder.endpointOverride)
    builder.build()
  }

  /**
   * SubscribeToShard exists only over HTTP/2, with prior knowledge on a plain-HTTP endpoint. One connection
   * carries many subscriptions (one stream each), and HTTP/2's flow control is how a subscription stops pushing
   * while the executor's buffer is full: the window is kept small so a paused subscription holds little. A ping
   * finds a connection that died silently. A subscription lasts up to 5 minutes, so no call or attempt timeout.
   */
  private def newFanOutClient(key: ClientKey): KinesisAsyncClient = {
    val config = key.config
    val overrides = ClientOverrideConfiguration.builder()
      .retryStrategy(retryStrategy(config.retry))
      .addExecutionInterceptor(SdkCallStats)
      .addExecutionInterceptor(CallNaming)
    key.kinesisProxy.foreach(p => overrides.addExecutionInterceptor(new ProxyRefusals(p)))
    val http = NettyNioAsyncHttpClient.builder()
      .protocol(Protocol.HTTP2)
      .maxConcurrency(Int.MaxValue)
      .http2Configuration((h: Http2Configuration.Builder) =>
        h
          .maxStreams(FanOutStreamsPerConnection)
          .initialWindowSize(FanOutWindowBytes)
          .healthCheckPingPeriod(java.time.Duration.ofSeconds(10)))
      .connectionTimeout(config.timeouts.connect)
      .readTimeout(FanOutReadTimeout)
    // Without a proxy the Netty client reads no proxy settings of its own: nothing to switch off.
    key.kinesisProxy.foreach(p => http.proxyConfiguration(nettyProxy(p)))
    val builder = KinesisAsyncClient.builder()
      .httpClientBuilder(http)
      .region(resolveRegion(config))
      .credentialsProvider(credentialsProvider(config, config.credentials, key.stsProxy))
      .overrideConfiguration(overrides.build())
    config.endpoint.foreach(builder.endpointOverride)
    builder.build()
  }

  /** Subscriptions sharing one HTTP/2 connection. */
  private val FanOutStreamsPerConnection = 100L
  private val FanOutWindowBytes = 512 * 1024
  /** Kinesis sends events while a shard is quiet too (empty ones, every few seconds): a minute without is a dead subscription. */
  private val FanOutReadTimeout = java.time.Duration.ofSeconds(60)

  /**
   * Where every sync client's call and attempt timeouts wait: the SDK's own executor keeps a cancelled timeout
   * queued until it would have fired, and wakes for each (two a call). Removed on cancel, an idle thousand-shard
   * stream's hundred calls a second no longer cost a thread waking twice a call.
   */
  private lazy val timeouts: ScheduledExecutorService = {
    val executor = new ScheduledThreadPoolExecutor(2, DaemonThreads.factory("kinesis-sdk-timeouts", numbered = true))
    executor.setRemoveOnCancelPolicy(true)
    executor
  }

  private def overrides(
      config: ConnectionConfig,
      proxy: Option[ProxyConfig],
      retryLimits: Boolean = true): ClientOverrideConfiguration = {
    val builder = ClientOverrideConfiguration.builder()
      .scheduledExecutorService(timeouts)
      .retryStrategy(retryStrategy(config.retry, retryLimits))
      .apiCallAttemptTimeout(config.timeouts.apiCallAttempt)
      .addExecutionInterceptor(SdkCallStats)
      .addExecutionInterceptor(CallNaming)
    proxy.foreach(p => builder.addExecutionInterceptor(new ProxyRefusals(p)))
    config.timeouts.apiCall.foreach(builder.apiCallTimeout)
    builder.build()
  }

  /**
   * The SDK's own standard strategy, with our backoff bounds and no circuit breaker (retries are ours to cap).
   * Kinesis answers its control-plane rate limits (DescribeStreamSummary's 20 calls/s per account, ListShards's
   * 1000 per stream) with LimitExceededException, which the SDK does not count as retryable on its own: one busy
   * neighbour on the account would otherwise fail a write or a micro-batch.
   */
  def retryStrategy(retry: RetryConfig, retryLimits: Boolean = true): RetryStrategy = {
    val backoff = RetryBackoff.strategy(retry)
    val builder = AwsRetryStrategy.standardRetryStrategy().toBuilder
      .maxAttempts(retry.maxAttempts.getOrElse(Int.MaxValue))
      .backoffStrategy(backoff)
      .throttlingBackoffStrategy(backoff)
      .circuitBreakerEnabled(false)
    if (retryLimits) builder.retryOnException(classOf[LimitExceededException])
    builder.build()
  }

  /**
   * The Apache client reads the proxy system properties and environment variables by itself unless told not to, by
   * the proxy's scheme rather than the endpoint's (so `https.proxyHost` alone would be missed): what the JVM's
   * properties say is resolved once, in [[ProxyConfig.resolve]], the same way for every client.
   */
  private def apacheProxy(proxy: Option[ProxyConfig]): ApacheProxy = {
    val builder = ApacheProxy.builder().useSystemPropertyValues(false).useEnvironmentVariableValues(false)
    proxy.foreach { p =>
      builder.endpoint(java.net.URI.create(s"http://${p.address}")).nonProxyHosts(p.nonProxyHostRegexes.asJava)
      p.server.username.foreach(builder.username)
      p.server.password.foreach(builder.password)
      // Basic credentials on the first request: no round trip to learn that the proxy wants them.
      builder.preemptiveBasicAuthenticationEnabled(p.server.username.isDefined)
    }
    builder.build()
  }

  private def nettyProxy(p: ProxyConfig): NettyProxy = {
    val builder = NettyProxy.builder().useSystemPropertyValues(false).useEnvironmentVariableValues(false)
      .scheme("http").host(p.server.host).port(p.server.port).nonProxyHosts(p.nonProxyHostRegexes.asJava)
    p.server.username.foreach(builder.username)
    p.server.password.foreach(builder.password)
    builder.build()
  }

  private def credentialsProvider(
      config: ConnectionConfig,
      creds: CredentialsConfig,
      stsProxy: Option[ProxyConfig]): AwsCredentialsProvider =
    creds match {
      case CredentialsConfig.DefaultChain => DefaultCredentialsProvider.builder().build()
      case CredentialsConfig.Static(ak, sk, None) => StaticCredentialsProvider.create(AwsBasicCredentials.create(ak, sk))
      case CredentialsConfig.Static(ak, sk, Some(token)) =>
        StaticCredentialsProvider.create(AwsSessionCredentials.create(ak, sk, token))
      case CredentialsConfig.Profile(name) => ProfileCredentialsProvider.builder().profileName(name).build()
      case role: CredentialsConfig.AssumeRole =>
        val sts = StsClient.builder()
          .httpClientBuilder(Apache5HttpClient.builder()
            .connectionTimeout(config.timeouts.connect)
            .proxyConfiguration(apacheProxy(stsProxy)))
          .region(resolveRegion(config))
          .credentialsProvider(credentialsProvider(config, role.base, stsProxy))
          .overrideConfiguration(overrides(config, stsProxy))
        role.stsEndpoint.foreach(sts.endpointOverride)
        val request = AssumeRoleRequest.builder().roleArn(role.roleArn).roleSessionName(role.sessionName)
        role.externalId.foreach(request.externalId)
        StsAssumeRoleCredentialsProvider.builder()
          .stsClient(sts.build())
          .refreshRequest(request.build())
          .build()
    }
}
