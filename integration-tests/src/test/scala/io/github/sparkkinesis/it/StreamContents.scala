package io.github.sparkkinesis.it

import scala.annotation.tailrec
import scala.jdk.CollectionConverters._

import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/** One record as the independent test client reads it back. */
final case class StoredRecord(shardId: String, partitionKey: String, data: Array[Byte], sequenceNumber: String) {
  def text: String = new String(data, "UTF-8")
}

/** Everything a stream holds, read with the unshaded SDK: each shard from its start, in sequence order. */
object StreamContents {
  def read(client: KinesisClient, stream: String): Seq[StoredRecord] = {
    val shards = client.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().asScala.toSeq
    shards.flatMap { shard =>
      val iterator = client.getShardIterator(GetShardIteratorRequest.builder().streamName(stream)
        .shardId(shard.shardId()).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
      drain(client, shard.shardId(), iterator, Vector.empty)
    }
  }

  /** Reads until a call returns nothing: the emulator serves everything stored at once. */
  @tailrec private def drain(client: KinesisClient, shardId: String, iterator: String,
      acc: Vector[StoredRecord]): Vector[StoredRecord] = {
    val response = client.getRecords(GetRecordsRequest.builder().shardIterator(iterator).limit(10000).build())
    val records = response.records().asScala.map { r =>
      StoredRecord(shardId, r.partitionKey(), r.data().asByteArray(), r.sequenceNumber())
    }
    if (records.isEmpty || response.nextShardIterator() == null) acc ++ records
    else drain(client, shardId, response.nextShardIterator(), acc ++ records)
  }
}
