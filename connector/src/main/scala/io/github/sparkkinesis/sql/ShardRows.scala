package io.github.sparkkinesis.sql

import io.github.sparkkinesis.client.{KinesisClientFactory, ShardListing}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{BooleanType, StringType, StructField, StructType}
import org.apache.spark.unsafe.types.UTF8String
import software.amazon.awssdk.services.kinesis.model.{ResourceNotFoundException, Shard}
import io.github.sparkkinesis.source.ShardDiscovery

/**
 * The rows of `kinesis_shards`: one per shard as ListShards returns it. Hash keys are 128-bit, beyond any Spark
 * decimal, so they stay the decimal strings Kinesis gives.
 */
object ShardRows {
  val schema: StructType = StructType(Seq(
    StructField("stream", StringType, nullable = false),
    StructField("shardId", StringType, nullable = false),
    StructField("parentShardId", StringType),
    StructField("adjacentParentShardId", StringType),
    StructField("startingHashKey", StringType, nullable = false),
    StructField("endingHashKey", StringType, nullable = false),
    StructField("startingSequenceNumber", StringType, nullable = false),
    StructField("endingSequenceNumber", StringType),
    StructField("isOpen", BooleanType, nullable = false)
  ))

  def list(request: ShardListingRequest): Seq[InternalRow] = {
    val client = KinesisClientFactory.sync(request.connection)
    request.streams.flatMap { stream =>
      val shards =
        try ShardListing.all(client, stream, request.streamArns.get(stream))
        catch {
          case e: ResourceNotFoundException => throw ShardDiscovery.streamNotFound(stream, request.connection, e)
        }
      shards.map(row(stream, _))
    }
  }

  private def row(stream: String, shard: Shard): InternalRow = {
    val hashes = Option(shard.hashKeyRange())
    val sequences = Option(shard.sequenceNumberRange())
    InternalRow(Seq(
      stream,
      shard.shardId(),
      shard.parentShardId(),
      shard.adjacentParentShardId(),
      hashes.map(_.startingHashKey()).orNull,
      hashes.map(_.endingHashKey()).orNull,
      sequences.map(_.startingSequenceNumber()).orNull,
      sequences.map(_.endingSequenceNumber()).orNull
    ).map(UTF8String.fromString) :+ ShardListing.isOpen(shard): _*)
  }
}
