package io.github.sparkkinesis.client

/** A Kinesis stream's ARN, `arn:<partition>:kinesis:<region>:<account>:stream/<name>`, taken apart. */
final case class StreamArn(region: String, account: String, name: String)

object StreamArn {
  private val Pattern = """arn:aws[a-z-]*:kinesis:([a-z0-9-]+):(\d{12}):stream/([a-zA-Z0-9_.-]{1,128})""".r

  /**
   * Whether a stream as the sink holds it (a name, or an ARN it checked) is an ARN: requests then carry it as
   * `StreamARN`, which writing to another account's stream through its resource policy needs.
   */
  def isArn(stream: String): Boolean = stream.startsWith("arn:")

  def parse(s: String): Option[StreamArn] = s match {
    case Pattern(region, account, name) => Some(StreamArn(region, account, name))
    case _ => None
  }
}
