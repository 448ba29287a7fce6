package io.github.sparkkinesis.options

/** Which side of the connector reads an option. */
sealed trait OptionScope
object OptionScope {
  case object Source extends OptionScope
  case object Sink extends OptionScope
  case object Both extends OptionScope
}

/**
 * One user-facing option: its key (matched case-insensitively, as Spark does), the default as the docs show
 * it, what it means, and whether its value is a secret that must never be printed.
 */
final case class KinesisOption(
    key: String,
    default: Option[String],
    doc: String,
    scope: OptionScope,
    secret: Boolean = false) {
  def lowerKey: String = key.toLowerCase(java.util.Locale.ROOT)
}

/** A bad option key or value, reported before the query starts. The message names option, value and fix. */
class KinesisOptionException(message: String) extends IllegalArgumentException(message)
