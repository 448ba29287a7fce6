package io.github.sparkkinesis.client

import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.interceptor.{
  Context,
  ExecutionAttributes,
  ExecutionInterceptor,
  SdkExecutionAttribute
}

/**
 * Names the API call and the error code in every error AWS answers, once the SDK's retries are over. The SDK's own
 * message ("The security token included in the request is invalid") says neither which call was refused nor, for
 * access denied, which permission is missing (SPEC §5). The exception keeps its class, so callers that match on it
 * (stream not found, expired iterator) are unaffected.
 */
object CallNaming extends ExecutionInterceptor {
  override def modifyException(context: Context.FailedExecution, attributes: ExecutionAttributes): Throwable =
    context.exception() match {
      case e: AwsServiceException if e.awsErrorDetails() != null =>
        val details = e.awsErrorDetails()
        val call = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME)
        val named =
          s"$call failed with ${details.errorCode()}: ${Option(details.errorMessage()).getOrElse("no message")}"
        e.toBuilder.message(named).awsErrorDetails(details.toBuilder.errorMessage(named).build()).build()
      case other => other
    }
}
