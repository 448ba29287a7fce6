package io.github.sparkkinesis.client

import java.io.IOException

import software.amazon.awssdk.awscore.exception.{AwsErrorDetails, AwsServiceException}
import software.amazon.awssdk.core.exception.SdkClientException
import software.amazon.awssdk.core.interceptor.{
  Context,
  ExecutionAttributes,
  ExecutionInterceptor,
  SdkExecutionAttribute
}

/**
 * Names the proxy when it, not AWS, refused a call, once the SDK's retries are over (after CallNaming, so the AWS
 * wording it gives every error does not dress a proxy's answer as one from AWS). The SDK reports a proxy's 407
 * as if Kinesis had answered it ("Status Code: 407"), and a refused CONNECT tunnel (the enhanced fan-out client) as
 * "Could not connect to proxy", neither saying which proxy or which settings to fix. The password is never in the
 * message: only the proxy's address and the names of the settings that hold the credentials.
 */
final class ProxyRefusals(proxy: ProxyConfig) extends ExecutionInterceptor {
  override def modifyException(context: Context.FailedExecution, attributes: ExecutionAttributes): Throwable = {
    val call = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME)
    // The SDK requires the exception's class to stay: only its message changes.
    context.exception() match {
      case e: AwsServiceException if e.statusCode() == 407 =>
        val message =
          if (proxy.server.username.isDefined) ProxyRefusals.wrongCredentials(call, proxy)
          else ProxyRefusals.missingCredentials(call, proxy)
        val details = Option(e.awsErrorDetails()).map(_.toBuilder).getOrElse(AwsErrorDetails.builder())
        e.toBuilder.message(message).awsErrorDetails(details.errorMessage(message).build()).build()
      case e: SdkClientException if ProxyRefusals.tunnelRefused(e) =>
        e.toBuilder.message(ProxyRefusals.tunnelRefusal(call, proxy)).build()
      case other => other
    }
  }
}

object ProxyRefusals {
  def wrongCredentials(call: String, proxy: ProxyConfig): String =
    s"$call was refused by the HTTP proxy ${proxy.address} (from ${proxy.origin}) with 407 Proxy Authentication " +
      s"Required: it did not accept the credentials; check ${proxy.credentialKeys}."

  def missingCredentials(call: String, proxy: ProxyConfig): String =
    s"$call was refused by the HTTP proxy ${proxy.address} (from ${proxy.origin}) with 407 Proxy Authentication " +
      s"Required: it asks for credentials; set ${proxy.credentialKeys}."

  def tunnelRefusal(call: String, proxy: ProxyConfig): String =
    s"$call could not open a tunnel through the HTTP proxy ${proxy.address} (from ${proxy.origin}): the proxy " +
      s"refused the CONNECT request; check ${proxy.credentialKeys}, and that the proxy lets this host reach the " +
      "Kinesis endpoint."

  /** The SDK's Netty client turns any non-2xx answer to its CONNECT into this IOException, with no status. */
  private[client] def tunnelRefused(t: Throwable): Boolean =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(10).exists {
      case io: IOException => io.getMessage == "Could not connect to proxy"
      case _ => false
    }
}
