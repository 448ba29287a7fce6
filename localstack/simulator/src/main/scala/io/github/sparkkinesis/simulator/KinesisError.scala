package io.github.sparkkinesis.simulator

/**
 * An error answered the way AWS answers it: the `__type` the SDKs map to their exception classes, and the HTTP
 * status AWS uses for it (400 for client errors, 500 for internal failures, 503 when unavailable).
 */
final case class KinesisError(errorType: String, message: String, status: Int = 400)
  extends RuntimeException(s"$errorType: $message", null, false, false)

object KinesisError {
  def notFound(message: String): KinesisError = KinesisError("ResourceNotFoundException", message)
  def invalid(message: String): KinesisError = KinesisError("InvalidArgumentException", message)
  def validation(message: String): KinesisError = KinesisError("ValidationException", message)
  def inUse(message: String): KinesisError = KinesisError("ResourceInUseException", message)
  def limit(message: String): KinesisError = KinesisError("LimitExceededException", message)
  def throughput(message: String): KinesisError = KinesisError("ProvisionedThroughputExceededException", message)
  def expiredIterator(message: String): KinesisError = KinesisError("ExpiredIteratorException", message)
  def expiredNextToken(message: String): KinesisError = KinesisError("ExpiredNextTokenException", message)
  def unknownOperation(target: String): KinesisError =
    KinesisError("UnknownOperationException", s"Operation $target is not supported by the simulator")
  val internalFailure: KinesisError = KinesisError("InternalFailure", "Internal service failure.", 500)
  val serviceUnavailable: KinesisError = KinesisError("ServiceUnavailable", "Service Unavailable", 503)
}
