package io.github.sparkkinesis.client

import scala.jdk.CollectionConverters._

import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, Shard}

/** ListShards for the source's discovery and the sink's shard map alike. */
object ShardListing {
  /**
   * Every shard of `stream`, open and closed, following ListShards' pages (a page holds up to 1000 shards).
   * `clock` learns Kinesis' clock from the answers' dates.
   */
  def all(
      client: KinesisClient,
      stream: String,
      streamArn: Option[String] = None,
      clock: Option[KinesisClockBound] = None): Vector[Shard] = {
    val out = Vector.newBuilder[Shard]
    var request =
      streamArn.fold(ListShardsRequest.builder().streamName(stream))(ListShardsRequest.builder().streamARN(_)).build()
    var more = true
    while (more) {
      val sent = System.currentTimeMillis()
      val response = client.listShards(request)
      clock.foreach(_.observe(response.sdkHttpResponse(), sent, System.currentTimeMillis()))
      out ++= response.shards().asScala
      val token = response.nextToken()
      more = token != null
      // A request carrying a token must not name the stream.
      if (more) request = ListShardsRequest.builder().nextToken(token).build()
    }
    out.result()
  }

  /**
   * The shards created after `newest` (shard ids grow with each shard a stream creates, so resharding always
   * lists new ones here): one small call where [[all]] answers with every shard the stream still lists.
   */
  def after(client: KinesisClient, stream: String, streamArn: Option[String], newest: String): Vector[Shard] = {
    val request =
      streamArn.fold(ListShardsRequest.builder().streamName(stream))(ListShardsRequest.builder().streamARN(_))
        .exclusiveStartShardId(newest).build()
    val response = client.listShards(request)
    // More than a page of new shards: the caller lists the stream in full anyway, so the first page is enough.
    response.shards().asScala.toVector
  }

  /** Open shards have no ending sequence number. */
  def isOpen(shard: Shard): Boolean =
    shard.sequenceNumberRange() == null || shard.sequenceNumberRange().endingSequenceNumber() == null
}
