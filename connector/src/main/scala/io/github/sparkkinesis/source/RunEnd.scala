package io.github.sparkkinesis.source

/**
 * Where a feed of an AvailableNow run or a batch read stops (before its first record that arrived after
 * `endingTimestamp` too, when given) (docs/design/offsets.md, "The tip seen at start"): at
 * its first answer that reaches the shard's tip (a closed shard: its end). The feed is made after the run started,
 * so that answer holds every record put before the start, whatever the clocks say. Or, when a shard's reads cannot
 * catch up with its writes (other consumers share its read quota, `maxFetchRate`), before its first record that
 * arrived after `arrivedAfterMillis`: the latest time Kinesis' clock can have read at the start, as the `Date`
 * headers of its answers bound it, so such a record was put after the start. Whichever comes first.
 */
final case class RunEnd(arrivedAfterMillis: Option[Long])

object RunEnd {
  /** Past the bound on Kinesis' clock: for its hosts' clocks (the one that dates answers, the one that stamps records). */
  val MarginMillis = 250L

  /**
   * Where the feeds of a run that started at our `startMillis` stop, with what `clock` tells of Kinesis' clock,
   * and before `end` when it is a time (`endingPosition=at_timestamp`): whichever comes first.
   */
  def startedAt(
      startMillis: Long,
      clock: io.github.sparkkinesis.client.KinesisClockBound,
      end: Option[EndPosition]): RunEnd = {
    val tip: Option[Long] = clock.kinesisMillisAtMost(startMillis).map(_ + MarginMillis)
    val before: Option[Long] = end.collect { case EndPosition.AtTimestamp(millis) => millis - 1 }
    RunEnd((tip.toSeq ++ before).reduceOption((a: Long, b: Long) => math.min(a, b)))
  }
}
