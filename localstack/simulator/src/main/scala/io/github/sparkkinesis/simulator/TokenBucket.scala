package io.github.sparkkinesis.simulator

/**
 * A rate limit over one second of burst. `take` admits a request only when the whole amount is available;
 * `takeIntoDebt` admits it whenever the bucket is not empty and lets the balance go negative, which is how AWS
 * lets one large GetRecords (up to 10 MiB) or one large record through and then throttles until it is paid back.
 */
final class TokenBucket(ratePerSecond: Double, nowMillis: Long) {
  private val capacity = math.max(ratePerSecond, 1.0)
  private var balance = capacity
  private var updated = nowMillis

  private def refill(now: Long): Unit = {
    if (now > updated) balance = math.min(capacity, balance + (now - updated) * ratePerSecond / 1000.0)
    // A clock that went back (a test moving the clock offset) counts as no time passed: keeping the later instant
    // would leave the bucket dry until the clock caught up with it again.
    updated = now
  }

  def take(amount: Double, now: Long): Boolean = {
    refill(now)
    if (balance >= amount) { balance -= amount; true } else false
  }

  /** Admits an amount larger than the burst only from a full bucket, so large records burst like on AWS. */
  def takeOversize(amount: Double, now: Long): Boolean = {
    refill(now)
    if (balance >= amount || (amount > capacity && balance >= capacity)) { balance -= amount; true } else false
  }

  def hasTokens(now: Long): Boolean = { refill(now); balance > 0 }

  def takeIntoDebt(amount: Double, now: Long): Unit = { refill(now); balance -= amount }

  /** Returns what a `take` took, when the request it was for is refused for another reason. */
  def giveBack(amount: Double): Unit = balance = math.min(capacity, balance + amount)
}
