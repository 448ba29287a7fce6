package io.github.sparkkinesis.source

/**
 * Kinesis' rules for enhanced fan-out consumer names and ARNs: the options are checked with them on the driver
 * ([[SourceConfig]]) and the consumers registered with them ([[driver.FanOutConsumers]]).
 */
object ConsumerNames {
  /** `arn:aws:kinesis:<region>:<account>:stream/<stream>/consumer/<name>:<created>` */
  private val ConsumerArn =
    """arn:aws[a-z-]*:kinesis:[^:]*:\d{12}:stream/([a-zA-Z0-9_.-]+)/consumer/([a-zA-Z0-9_.-]+):\d+""".r

  def isConsumerArn(s: String): Boolean = ConsumerArn.pattern.matcher(s).matches()

  def streamOf(arn: String): String = arn match {
    case ConsumerArn(stream, _) => stream
    case _ => throw new IllegalArgumentException(s"not a consumer ARN: $arn")
  }

  /** Kinesis' rule for consumer names. */
  val NamePattern = "[a-zA-Z0-9_.-]{1,128}"
}
