package io.github.sparkkinesis.source
package executor

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.internal.Logging

/**
 * Says once per shard and JVM that KPL aggregates were skipped because they hold user records of another shard's
 * hash keys ([[KplDeaggregator]]): expected after a split or merge under an aggregating writer, which resends
 * their records to the right shards, so a line, not one per aggregate. Counts go to `numMisplacedAggregatesSkipped`.
 */
object MisplacedAggregates extends Logging {
  private val warned = ConcurrentHashMap.newKeySet[ShardKey]()

  def skipped(key: ShardKey, sequenceNumber: String, hashKeys: Option[HashKeySpan]): Unit =
    if (warned.add(key)) {
      logWarning(s"Kinesis shard $key: skipped the KPL aggregate at sequence number $sequenceNumber, which holds user " +
        s"records whose hash keys are outside the shard's range (${hashKeys.getOrElse("")}); a writer packed it " +
        "before the shard was resharded and resends its records to the shards that hold their keys, as the KPL " +
        "does (the KCL skips such aggregates too). Further skips in this shard are counted in the metric " +
        "numMisplacedAggregatesSkipped, not logged.")
    }
}
