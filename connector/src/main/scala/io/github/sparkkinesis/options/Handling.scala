package io.github.sparkkinesis.options

/** What an option key of another Kinesis connector does here (SPEC §2: never silently ignored). */
sealed abstract class Handling(val label: String)

object Handling {
  /** The same key (or one of ours read by its own row), with the same meaning. */
  case object Honoured extends Handling("honoured")
  /** Translated into our options (another name, other units or values). */
  case object Mapped extends Handling("mapped")
  /** Tunes something this connector does not have: its value is checked, then unused. */
  case object NoEffect extends Handling("accepted, no effect")
  /** Cannot work here: setting it fails, saying what to use instead. */
  case object Refused extends Handling("refused")
}
