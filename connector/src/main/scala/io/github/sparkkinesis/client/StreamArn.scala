package io.github.sparkkinesis.client

/** A Kinesis stream's ARN, `arn:<partition>:kinesis:<region>:<account>:stream/<name>`, taken apart. */
final case class StreamArn(region: String, account: String, name: String)

object StreamArn {
  private val Pattern = """arn:aws[a-z-]*:kinesis:([a-z0-9-]+):(\d{12}):stream/([a-zA-Z0-9_.-]{1,128})""".r

  def parse(s: String): Option[StreamArn] = s match {
    case Pattern(region, account, name) => Some(StreamArn(region, account, name))
    case _ => None
  }
}
