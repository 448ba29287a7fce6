package io.github.sparkkinesis.simulator

import java.net.URI
import java.time.Duration

import software.amazon.awssdk.auth.credentials.{AwsBasicCredentials, StaticCredentialsProvider}
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration
import software.amazon.awssdk.http.apache5.Apache5HttpClient
import software.amazon.awssdk.regions.Region
import software.amazon.awssdk.services.kinesis.KinesisClient

/**
 * A plain AWS SDK v2 client (CBOR, the SDK's default for Kinesis), by default with retries off so every quota and
 * fault reaches the caller as the SDK reports it, and explicit timeouts, so a hung call ends.
 */
object SdkClients {
  def kinesis(endpoint: URI, timeout: Duration = Duration.ofSeconds(10), retries: Boolean = false,
      keyId: String = "test", secret: String = "test"): KinesisClient =
    KinesisClient.builder()
      .endpointOverride(endpoint)
      .region(Region.US_EAST_1)
      .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(keyId, secret)))
      .httpClientBuilder(Apache5HttpClient.builder().socketTimeout(timeout).maxConnections(16))
      .overrideConfiguration(ClientOverrideConfiguration.builder()
        .retryStrategy(if (retries) AwsRetryStrategy.standardRetryStrategy() else AwsRetryStrategy.doNotRetry())
        .apiCallAttemptTimeout(timeout).build())
      .build()
}
