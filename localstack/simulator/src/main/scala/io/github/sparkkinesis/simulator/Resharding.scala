package io.github.sparkkinesis.simulator

import Out._

/**
 * SplitShard, MergeShards and UpdateShardCount, completed at once (the stream never stays UPDATING). Parents close
 * with an ending sequence number and name their children, so readers get ChildShards at the end of a parent.
 */
final class Resharding(sim: Simulator) {

  def splitShard(req: Req): Out = {
    val stream = sim.stream(req)
    val parent = openShard(stream, req.str("ShardToSplit"))
    val key = req.str("NewStartingHashKey")
    val hash = try BigInt(key) catch { case _: NumberFormatException => BigInt(-1) }
    if (hash <= parent.startHash || hash > parent.endHash) throw KinesisError.invalid(
      s"NewStartingHashKey $key used in SplitShard() on shard ${parent.id} in stream ${stream.name} under account " +
        s"${StreamState.Account} is not both greater than one plus the shard's StartingHashKey ${parent.startHash} " +
        s"and less than the shard's EndingHashKey ${parent.endHash}.")
    split(stream, parent, hash)
    Out.empty
  }

  def mergeShards(req: Req): Out = {
    val stream = sim.stream(req)
    val first = openShard(stream, req.str("ShardToMerge"))
    val second = openShard(stream, req.str("AdjacentShardToMerge"))
    if (first.endHash + 1 != second.startHash && second.endHash + 1 != first.startHash) throw KinesisError.invalid(
      s"Shards ${first.id} and ${second.id} in stream ${stream.name} under account ${StreamState.Account} are not " +
        "an adjacent pair of shards eligible for merging")
    merge(stream, first, second)
    Out.empty
  }

  /**
   * Uniform scaling done as AWS does it, with real splits and merges: first split open shards at every boundary of
   * the target layout, then merge the pieces of each target range pairwise. Every new shard so has at most two
   * parents, and lineage stays what readers expect.
   */
  def updateShardCount(req: Req): Out = {
    val stream = sim.stream(req)
    val target = req.optInt("TargetShardCount").getOrElse(throw KinesisError.invalid("TargetShardCount is required"))
    req.optStr("ScalingType").filter(_ != "UNIFORM_SCALING").foreach(t =>
      throw KinesisError.validation(s"ScalingType $t is not supported; use UNIFORM_SCALING"))
    val current = stream.openShards.size
    if (target < 1) throw KinesisError.validation(s"TargetShardCount $target must be at least 1")
    if (target > 2 * current) throw KinesisError.limit(
      s"UpdateShardCount cannot scale up over double your current open shard count. Current open shard count: " +
        s"$current Target shard count: $target")
    if (target * 2 < current) throw KinesisError.limit(
      s"UpdateShardCount cannot scale down below half your current open shard count. Current open shard count: " +
        s"$current Target shard count: $target")
    val ranges = HashKeys.uniformRanges(target)
    ranges.drop(1).map(_._1).foreach { boundary =>
      stream.openShards.find(s => s.startHash < boundary && boundary <= s.endHash).foreach(split(stream, _, boundary))
    }
    ranges.foreach { case (start, end) =>
      var pieces = stream.openShards.filter(s => s.startHash >= start && s.endHash <= end).sortBy(_.startHash)
      while (pieces.size > 1) {
        val merged = merge(stream, pieces(0), pieces(1))
        pieces = merged +: pieces.drop(2)
      }
    }
    obj("StreamName" -> Str(stream.name), "StreamARN" -> Str(stream.arn), "CurrentShardCount" -> Num(current),
      "TargetShardCount" -> Num(target))
  }

  private def openShard(stream: StreamState, id: String): Shard = {
    val shard = sim.shard(stream, id)
    if (!shard.isOpen) throw KinesisError.inUse(
      s"Shard $id in stream ${stream.name} under account ${StreamState.Account} has already been merged or split, " +
        "and thus is not eligible for merging or splitting.")
    shard
  }

  private def split(stream: StreamState, parent: Shard, hash: BigInt): Unit = {
    val now = sim.now()
    val parentEnd = sim.nextCounter()
    val low = new Shard(stream.newShardId(), Some(parent.id), None, parent.startHash, hash - 1, sim.nextCounter(), now)
    val high = new Shard(stream.newShardId(), Some(parent.id), None, hash, parent.endHash, sim.nextCounter(), now)
    parent.close(parentEnd, now, Seq(low.id, high.id))
    stream.addShard(low)
    stream.addShard(high)
  }

  private def merge(stream: StreamState, shard: Shard, adjacent: Shard): Shard = {
    val now = sim.now()
    val shardEnd = sim.nextCounter()
    val adjacentEnd = sim.nextCounter()
    val child = new Shard(stream.newShardId(), Some(shard.id), Some(adjacent.id), shard.startHash.min(adjacent.startHash),
      shard.endHash.max(adjacent.endHash), sim.nextCounter(), now)
    shard.close(shardEnd, now, Seq(child.id))
    adjacent.close(adjacentEnd, now, Seq(child.id))
    stream.addShard(child)
    child
  }
}
