package io.github.sparkkinesis.source

/**
 * KPL aggregates a query did not split ([[executor.KplDeaggregator]]): `misplaced`, skipped because they hold user
 * records of another shard's hash keys; `malformed`, verified but self-contradicting, read whole as plain records.
 * Counted in each JVM and summed on the driver for its metrics.
 */
final case class AggregateCounts(misplaced: Long, malformed: Long) {
  def +(o: AggregateCounts): AggregateCounts = AggregateCounts(misplaced + o.misplaced, malformed + o.malformed)
  /** What `this` counted past `earlier`, never below zero (an executor that restarted counts from zero again). */
  def since(earlier: AggregateCounts): AggregateCounts =
    AggregateCounts(math.max(0L, misplaced - earlier.misplaced), math.max(0L, malformed - earlier.malformed))
  def isZero: Boolean = misplaced == 0 && malformed == 0
}

object AggregateCounts {
  val zero: AggregateCounts = AggregateCounts(0, 0)
}
