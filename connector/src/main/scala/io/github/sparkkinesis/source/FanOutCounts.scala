package io.github.sparkkinesis.source

/** What enhanced fan-out did for one query, counted in each JVM and summed on the driver for its metrics. */
final case class FanOutCounts(subscriptions: Long, renewals: Long, events: Long, streamErrors: Long) {
  def -(o: FanOutCounts): FanOutCounts =
    FanOutCounts(
      subscriptions - o.subscriptions,
      renewals - o.renewals,
      events - o.events,
      streamErrors - o.streamErrors)
  def +(o: FanOutCounts): FanOutCounts =
    FanOutCounts(
      subscriptions + o.subscriptions,
      renewals + o.renewals,
      events + o.events,
      streamErrors + o.streamErrors)
}

object FanOutCounts {
  val zero: FanOutCounts = FanOutCounts(0, 0, 0, 0)
}
