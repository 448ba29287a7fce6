package io.github.sparkkinesis.simulator

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

import Out._

/** Stream lifecycle and description: create, delete, describe, list streams and shards, stream settings. */
final class ControlPlane(sim: Simulator) {
  private val NamePattern = "[a-zA-Z0-9_.-]{1,128}".r
  private val NextTokenLifetimeMillis = 300 * 1000L

  def createStream(req: Req): Out = {
    val name = req.str("StreamName")
    if (!NamePattern.matches(name)) throw KinesisError.validation(
      s"1 validation error detected: Value '$name' at 'streamName' failed to satisfy constraint: Member must " +
        "satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    val onDemand = req.obj("StreamModeDetails").flatMap(_.optStr("StreamMode")).contains("ON_DEMAND")
    val shardCount = req.optInt("ShardCount").orElse(if (onDemand) Some(4) else None)
      .getOrElse(throw KinesisError.invalid("ShardCount is required for a PROVISIONED stream"))
    if (shardCount < 1) throw KinesisError.validation(
      s"1 validation error detected: Value '$shardCount' at 'shardCount' failed to satisfy constraint: Member must " +
        "have value greater than or equal to 1")
    val maxRecordKiB = req.optInt("MaxRecordSizeInKiB").getOrElse(StreamState.DefaultMaxRecordSizeKiB)
    checkMaxRecordSize(maxRecordKiB)
    sim.createStream(name, shardCount, maxRecordKiB, StreamState.Account)
    Out.empty
  }

  def deleteStream(req: Req): Out = {
    sim.streams.remove(sim.stream(req).key)
    Out.empty
  }

  def describeStreamSummary(req: Req): Out = {
    val now = sim.now()
    val quotas = sim.settings.quotas
    if (quotas.on(quotas.describeStreamSummary) && !sim.describeSummaryBucket(quotas, now).take(1, now))
      throw KinesisError.limit(s"Rate exceeded for DescribeStreamSummary under account ${StreamState.Account}.")
    val stream = sim.stream(req)
    sim.trim(stream, now)
    obj("StreamDescriptionSummary" -> obj(
      "StreamName" -> Str(stream.name),
      "StreamARN" -> Str(stream.arn),
      "StreamStatus" -> Str("ACTIVE"),
      "StreamModeDetails" -> obj("StreamMode" -> Str("PROVISIONED")),
      "RetentionPeriodHours" -> Num(stream.retentionHours),
      "StreamCreationTimestamp" -> Timestamp(stream.createdMillis),
      "EnhancedMonitoring" -> Arr(Seq(obj("ShardLevelMetrics" -> Arr(Nil)))),
      "EncryptionType" -> Str("NONE"),
      "OpenShardCount" -> Num(stream.openShards.size),
      "ConsumerCount" -> Num(0),
      "MaxRecordSizeInKiB" -> Num(stream.maxRecordSizeKiB)
    ))
  }

  def describeStream(req: Req): Out = {
    val stream = sim.stream(req)
    sim.trim(stream, sim.now())
    val limit = math.min(req.optInt("Limit").getOrElse(100), 100)
    val after = req.optStr("ExclusiveStartShardId")
    val shards = stream.shards.iterator.filter(s => after.forall(s.id > _)).take(limit + 1).toSeq
    obj("StreamDescription" -> obj(
      "StreamName" -> Str(stream.name),
      "StreamARN" -> Str(stream.arn),
      "StreamStatus" -> Str("ACTIVE"),
      "StreamModeDetails" -> obj("StreamMode" -> Str("PROVISIONED")),
      "Shards" -> Arr(shards.take(limit).map(ShardViews.shard)),
      "HasMoreShards" -> Bool(shards.size > limit),
      "RetentionPeriodHours" -> Num(stream.retentionHours),
      "StreamCreationTimestamp" -> Timestamp(stream.createdMillis),
      "EnhancedMonitoring" -> Arr(Seq(obj("ShardLevelMetrics" -> Arr(Nil)))),
      "EncryptionType" -> Str("NONE")
    ))
  }

  def listStreams(req: Req): Out = {
    val limit = math.min(req.optInt("Limit").getOrElse(100), 100)
    val after = req.optStr("NextToken").map(decodeToken(_).head).orElse(req.optStr("ExclusiveStartStreamName"))
    val names = sim.streams.keysIterator.filter(n => after.forall(n > _) && sim.streams(n).account == StreamState.Account).take(limit + 1).toSeq
    val page = names.take(limit)
    obj(
      "StreamNames" -> Arr(page.map(Str)),
      "HasMoreStreams" -> Bool(names.size > limit),
      "NextToken" -> (if (names.size > limit) Some(Str(encodeToken(Seq(page.last)))) else None),
      "StreamSummaries" -> Arr(page.map { n =>
        val s = sim.streams(n)
        obj("StreamName" -> Str(n), "StreamARN" -> Str(s.arn), "StreamStatus" -> Str("ACTIVE"),
          "StreamModeDetails" -> obj("StreamMode" -> Str("PROVISIONED")),
          "StreamCreationTimestamp" -> Timestamp(s.createdMillis))
      })
    )
  }

  /**
   * ListShards with pagination and ShardFilter. A NextToken carries the stream, its incarnation, the last shard
   * listed and the filter, so later pages list the same selection, and it expires after 300 s as on AWS.
   */
  def listShards(req: Req): Out = {
    val now = sim.now()
    val token = req.optStr("NextToken").map { t =>
      if (req.has("StreamName") || req.has("StreamARN"))
        throw KinesisError.invalid("NextToken and StreamName or StreamARN cannot be provided together.")
      val fields = decodeToken(t)
      if (fields.length != 6) throw KinesisError.invalid(s"Invalid NextToken.")
      if (now - fields(1).toLong > NextTokenLifetimeMillis) throw KinesisError.expiredNextToken(
        "The timestamp of the NextToken has expired.")
      fields
    }
    val stream = token.map(f => sim.streamKeyed(f(0))).getOrElse(sim.stream(req))
    val quotas = sim.settings.quotas
    if (quotas.on(quotas.listShards) && !stream.listShardsBucket(quotas, now).take(1, now))
      throw KinesisError.limit(s"Rate exceeded for stream ${stream.name} under account ${StreamState.Account}.")
    sim.trim(stream, now)
    val maxResults = req.optInt("MaxResults").getOrElse(1000)
    if (maxResults < 1 || maxResults > 10000) throw KinesisError.invalid(
      s"MaxResults $maxResults must be between 1 and 10000")
    val (filterType, filterShard, filterTime, after) = token match {
      case Some(f) => (f(2), f(3), f(4), Some(f(5)))
      case None =>
        val filter = req.obj("ShardFilter")
        val tpe = filter.map(_.str("Type")).getOrElse("")
        val shardId = filter.flatMap(_.optStr("ShardId")).getOrElse("")
        val time = filter.flatMap(_.optTimestampMillis("Timestamp")).map(_.toString).getOrElse("")
        if (tpe == "AFTER_SHARD_ID" && shardId.isEmpty)
          throw KinesisError.invalid("ShardFilter of type AFTER_SHARD_ID needs a ShardId")
        if (Set("AT_TIMESTAMP", "FROM_TIMESTAMP")(tpe) && time.isEmpty)
          throw KinesisError.invalid(s"ShardFilter of type $tpe needs a Timestamp")
        if (req.has("ExclusiveStartShardId") && filter.isDefined)
          throw KinesisError.invalid("ExclusiveStartShardId and ShardFilter cannot be provided together.")
        (tpe, shardId, time, req.optStr("ExclusiveStartShardId"))
    }
    val horizon = now - sim.retentionMillis(stream)
    def openAt(s: Shard, t: Long) = s.createdMillis <= t && s.closedMillis.forall(_ >= t)
    val selected = stream.shards.iterator.filter { s =>
      filterType match {
        case "" | "FROM_TRIM_HORIZON" => true
        case "AFTER_SHARD_ID" => s.id > filterShard
        case "AT_LATEST" => s.isOpen
        case "AT_TRIM_HORIZON" => openAt(s, math.max(horizon, stream.createdMillis))
        case "AT_TIMESTAMP" => openAt(s, math.max(filterTime.toLong, stream.createdMillis))
        case "FROM_TIMESTAMP" => s.closedMillis.forall(_ >= math.max(filterTime.toLong, horizon))
        case other => throw KinesisError.invalid(s"Unknown ShardFilter type $other")
      }
    }.filter(s => after.forall(s.id > _)).take(maxResults + 1).toSeq
    val page = selected.take(maxResults)
    sim.counters.listed(stream.name, page.size)
    val next = if (selected.size > maxResults)
      Some(Str(encodeToken(Seq(stream.key, now.toString, filterType, filterShard, filterTime, page.last.id))))
    else None
    obj("Shards" -> Arr(page.map(ShardViews.shard)), "NextToken" -> next)
  }

  def increaseRetention(req: Req): Out = changeRetention(req, increase = true)
  def decreaseRetention(req: Req): Out = changeRetention(req, increase = false)

  private def changeRetention(req: Req, increase: Boolean): Out = {
    val stream = sim.stream(req)
    val hours = req.optInt("RetentionPeriodHours").getOrElse(throw KinesisError.invalid("RetentionPeriodHours is required"))
    if (hours < 24 || hours > 8760)
      throw KinesisError.invalid(s"Minimum allowed retention period is 24 hours and maximum is 8760 hours; got $hours")
    if (increase && hours < stream.retentionHours) throw KinesisError.invalid(
      s"Requested retention period ($hours hours) for stream ${stream.name} can not be shorter than existing " +
        s"retention period (${stream.retentionHours} hours). Use DecreaseRetentionPeriod API.")
    if (!increase && hours > stream.retentionHours) throw KinesisError.invalid(
      s"Requested retention period ($hours hours) for stream ${stream.name} can not be longer than existing " +
        s"retention period (${stream.retentionHours} hours). Use IncreaseRetentionPeriod API.")
    stream.retentionHours = hours
    Out.empty
  }

  def updateMaxRecordSize(req: Req): Out = {
    val stream = sim.stream(req)
    val kib = req.optInt("MaxRecordSizeInKiB").getOrElse(throw KinesisError.validation("MaxRecordSizeInKiB is required"))
    checkMaxRecordSize(kib)
    stream.maxRecordSizeKiB = kib
    Out.empty
  }

  private def checkMaxRecordSize(kib: Int): Unit =
    if (kib < 1024 || kib > 10240) throw KinesisError.validation(
      s"1 validation error detected: Value '$kib' at 'maxRecordSizeInKiB' failed to satisfy constraint: Member " +
        "must have value between 1024 and 10240")

  private def encodeToken(fields: Seq[String]): String =
    Base64.getEncoder.encodeToString(fields.mkString("\u0000").getBytes(UTF_8))

  private def decodeToken(token: String): Array[String] =
    try new String(Base64.getDecoder.decode(token), UTF_8).split("\u0000", -1)
    catch { case _: IllegalArgumentException => throw KinesisError.invalid("Invalid NextToken.") }
}
