package io.github.sparkkinesis.simulator

/**
 * What a test may change while the server runs. AWS's fixed durations (iterators live 5 minutes, retention is at
 * least 24 hours) are knobs here so expiry and trimming can be tested in seconds.
 *
 * @param retentionMillis overrides every stream's retention period when set
 * @param consumerActivationMillis how long a registered consumer stays CREATING (and a deregistered one DELETING)
 * @param subscriptionDurationMillis how long a SubscribeToShard subscription lasts (AWS: 5 minutes)
 * @param subscriptionHeartbeatMillis how often a subscription on a quiet shard gets an empty event
 * @param clockOffsetMs how far the simulated Kinesis clock is ahead of this machine's (negative: behind); it shifts
 *   every time the simulator takes (arrival timestamps, MillisBehindLatest, retention, iterator and consumer times)
 * @param splitEndAnswer a closed shard's last records come in one GetRecords answer (or SubscribeToShard event) and
 *   its end (null iterator, ChildShards) in the next, as AWS may answer, instead of both in the same answer
 */
final case class Settings(
    quotas: QuotaSettings = QuotaSettings(),
    iteratorExpiryMillis: Long = Settings.DefaultIteratorExpiryMillis,
    retentionMillis: Option[Long] = None,
    consumerActivationMillis: Long = 500L,
    subscriptionDurationMillis: Long = 5 * 60 * 1000L,
    subscriptionHeartbeatMillis: Long = 5000L,
    clockOffsetMs: Long = 0L,
    splitEndAnswer: Boolean = false) {
  require(consumerActivationMillis >= 0, s"consumer activation must not be negative, got $consumerActivationMillis")
  require(subscriptionDurationMillis > 0, s"subscription duration must be positive, got $subscriptionDurationMillis")
  require(subscriptionHeartbeatMillis > 0, s"subscription heartbeat must be positive, got $subscriptionHeartbeatMillis")
  require(iteratorExpiryMillis > 0, s"iterator expiry must be positive, got $iteratorExpiryMillis")
  retentionMillis.foreach(r => require(r > 0, s"retention must be positive, got $r"))
}

object Settings {
  val DefaultIteratorExpiryMillis: Long = 5 * 60 * 1000L
}
