package io.github.sparkkinesis.simulator

/**
 * What a test may change while the server runs. AWS's fixed durations (iterators live 5 minutes, retention is at
 * least 24 hours) are knobs here so expiry and trimming can be tested in seconds.
 *
 * @param retentionMillis overrides every stream's retention period when set
 */
final case class Settings(
    quotas: QuotaSettings = QuotaSettings(),
    iteratorExpiryMillis: Long = Settings.DefaultIteratorExpiryMillis,
    retentionMillis: Option[Long] = None) {
  require(iteratorExpiryMillis > 0, s"iterator expiry must be positive, got $iteratorExpiryMillis")
  retentionMillis.foreach(r => require(r > 0, s"retention must be positive, got $r"))
}

object Settings {
  val DefaultIteratorExpiryMillis: Long = 5 * 60 * 1000L
}
