package io.github.sparkkinesis.simulator

import Out._

/** How shards are shown in ListShards, DescribeStream and GetRecords' ChildShards. */
object ShardViews {
  def hashRange(shard: Shard): Out = obj(
    "StartingHashKey" -> Str(shard.startHash.toString),
    "EndingHashKey" -> Str(shard.endHash.toString))

  def shard(shard: Shard): Out = obj(
    "ShardId" -> Str(shard.id),
    "ParentShardId" -> shard.parentId.map(Str),
    "AdjacentParentShardId" -> shard.adjacentParentId.map(Str),
    "HashKeyRange" -> hashRange(shard),
    "SequenceNumberRange" -> obj(
      "StartingSequenceNumber" -> Str(SequenceNumbers.format(shard.startCounter)),
      "EndingSequenceNumber" -> shard.endCounter.map(c => Str(SequenceNumbers.format(c))))
  )

  def child(child: Shard): Out = obj(
    "ShardId" -> Str(child.id),
    "ParentShards" -> Arr((child.parentId.toSeq ++ child.adjacentParentId).map(Str)),
    "HashKeyRange" -> hashRange(child))
}
