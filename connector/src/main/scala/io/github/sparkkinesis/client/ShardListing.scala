package io.github.sparkkinesis.client

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, Shard}

/** ListShards for the source's discovery and the sink's shard map alike. */
object ShardListing {
  /** Every shard of `stream`, open and closed, following ListShards' pages (a page holds up to 1000 shards). */
  def all(client: KinesisClient, stream: String, streamArn: Option[String] = None): Vector[Shard] = {
    val out = Vector.newBuilder[Shard]
    var request = streamArn.fold(ListShardsRequest.builder().streamName(stream))(ListShardsRequest.builder().streamARN(_)).build()
    var more = true
    while (more) {
      val response = client.listShards(request)
      out ++= response.shards().asScala
      val token = response.nextToken()
      more = token != null
      // A request carrying a token must not name the stream.
      if (more) request = ListShardsRequest.builder().nextToken(token).build()
    }
    out.result()
  }

  /** Open shards have no ending sequence number. */
  def isOpen(shard: Shard): Boolean =
    shard.sequenceNumberRange() == null || shard.sequenceNumberRange().endingSequenceNumber() == null
}
