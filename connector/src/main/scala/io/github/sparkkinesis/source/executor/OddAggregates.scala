package io.github.sparkkinesis.source
package executor

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.internal.Logging

/**
 * Says once per shard and JVM, for each kind, that KPL aggregates were not split ([[KplDeaggregator]]): a line,
 * not one per aggregate; the counts go to the metrics `numMisplacedAggregatesSkipped` and `numMalformedAggregates`.
 */
object OddAggregates extends Logging {
  private val misplacedSaid = ConcurrentHashMap.newKeySet[ShardKey]()
  private val malformedSaid = ConcurrentHashMap.newKeySet[ShardKey]()

  /** Expected after a split or merge under an aggregating writer, which resends their records to the right shards. */
  def misplaced(key: ShardKey, sequenceNumber: String, hashKeys: Option[HashKeySpan]): Unit =
    if (misplacedSaid.add(key)) {
      logWarning(s"Kinesis shard $key: skipped the KPL aggregate at sequence number $sequenceNumber, which holds user " +
        s"records whose hash keys are outside the shard's range (${hashKeys.getOrElse("")}); a writer packed it " +
        "before the shard was resharded and resends its records to the shards that hold their keys, as the KPL " +
        "does (the KCL skips such aggregates too). Further skips in this shard are counted in the metric " +
        "numMisplacedAggregatesSkipped, not logged.")
    }

  /** A producer's fault: its checksum verifies, its contents do not hold together. */
  def malformed(key: ShardKey, sequenceNumber: String, why: String): Unit =
    if (malformedSaid.add(key)) {
      logWarning(s"Kinesis shard $key: the record at sequence number $sequenceNumber is a KPL aggregate whose " +
        s"checksum matches but whose contents are inconsistent ($why); read whole as one plain record " +
        "(subSequenceNumber 0, data as stored), so nothing is lost: check the producer that wrote it. Further such " +
        "records in this shard are counted in the metric numMalformedAggregates, not logged.")
    }
}
