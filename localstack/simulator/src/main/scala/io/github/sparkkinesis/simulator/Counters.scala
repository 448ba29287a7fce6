package io.github.sparkkinesis.simulator

import scala.collection.mutable

/** What one shard saw, so a test can assert quota compliance from the server's side. */
final class ShardCounters {
  var putRecords: Long = 0          // records accepted
  var putBytes: Long = 0
  var throttledPutRecords: Long = 0 // records refused with ProvisionedThroughputExceededException
  var failedPutRecords: Long = 0    // records failed by an injected InternalFailure
  var getRecordsCalls: Long = 0     // every GetRecords call on the shard, throttled or not
  var throttledGetRecordsCalls: Long = 0
  var getRecordsRecords: Long = 0
  var getRecordsBytes: Long = 0
  var getShardIteratorCalls: Long = 0
  var throttledGetShardIteratorCalls: Long = 0
  var subscriptions: Long = 0          // SubscribeToShard calls accepted
  var throttledSubscriptions: Long = 0 // refused by the one-per-second rule
  var expiredSubscriptions: Long = 0   // ended after their duration
  var cutSubscriptions: Long = 0       // ended by a fault (cut or exception event)
  var subscriptionEvents: Long = 0
  var subscriptionRecords: Long = 0
  var subscriptionBytes: Long = 0
}

/** Per operation: calls received, answered with an error (throttling included), throttled, hit by a fault. */
final class OperationCounters {
  var calls: Long = 0
  var errors: Long = 0
  var throttled: Long = 0
  var faults: Long = 0
}

/**
 * Every counter, kept apart from the streams so a test can still read them after a stream was deleted. Guarded by
 * the simulator's state lock.
 */
final class Counters {
  val operations: mutable.HashMap[String, OperationCounters] = mutable.HashMap.empty
  val streamOperations: mutable.HashMap[(String, String), OperationCounters] = mutable.HashMap.empty
  val shards: mutable.HashMap[(String, String), ShardCounters] = mutable.HashMap.empty
  /** Shards ListShards answered with, per stream: what a client's relisting costs, not only how often it lists. */
  val listedShards: mutable.HashMap[String, Long] = mutable.HashMap.empty
  /** Kinesis requests by wire format, so a test can tell which encoding its client really spoke. */
  val requestsByFormat: mutable.HashMap[String, Long] = mutable.HashMap.empty

  def operation(op: String): OperationCounters = operations.getOrElseUpdate(op, new OperationCounters)

  def streamOperation(stream: String, op: String): OperationCounters =
    streamOperations.getOrElseUpdate((stream, op), new OperationCounters)

  def shard(stream: String, shardId: String): ShardCounters = shards.getOrElseUpdate((stream, shardId), new ShardCounters)

  def listed(stream: String, shards: Int): Unit = listedShards(stream) = listedShards.getOrElse(stream, 0L) + shards

  def request(format: WireFormat): Unit = {
    val name = if (format.isCbor) "cbor" else "json"
    requestsByFormat(name) = requestsByFormat.getOrElse(name, 0L) + 1
  }

  def reset(): Unit = { operations.clear(); streamOperations.clear(); shards.clear(); requestsByFormat.clear(); listedShards.clear() }
}
