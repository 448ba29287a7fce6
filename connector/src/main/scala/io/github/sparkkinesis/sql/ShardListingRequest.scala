package io.github.sparkkinesis.sql

import io.github.sparkkinesis.client.ConnectionConfig
import io.github.sparkkinesis.options.{KinesisOptionException, KinesisOptions, OptionReader, OptionScope}

/** What `kinesis_shards` lists: the streams (by name, or by ARN where `streamARN` gives one) and how to reach them. */
final case class ShardListingRequest(streams: Seq[String], streamArns: Map[String, String], connection: ConnectionConfig)

object ShardListingRequest {
  def apply(reader: OptionReader): ShardListingRequest = {
    // A read or write option here is a query mistaken for another, not a setting to ignore.
    KinesisOptions.all.filter(_.scope != OptionScope.Both).find(o => reader.get(o).isDefined).foreach { o =>
      throw new KinesisOptionException(s"Option '${o.key}' does not apply to ${KinesisFunctions.KinesisShards.name}, " +
        "which takes streamName (or streamARN) and the connection options: region, endpoint, credentials " +
        "(awsAccessKey, awsSecretKey, awsSessionToken, awsProfile, roleArn, ...), retries and timeouts.")
    }
    ShardListingRequest(reader.streamNames, reader.streamArns, reader.connection)
  }
}
