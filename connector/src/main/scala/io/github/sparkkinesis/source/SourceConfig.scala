package io.github.sparkkinesis.source

import java.time.{Duration, Instant}
import java.time.format.DateTimeParseException

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.github.sparkkinesis.RowLayout
import io.github.sparkkinesis.client.ConnectionConfig
import io.github.sparkkinesis.options.{DatabricksOptions, KinesisOption, KinesisOptionException, OptionReader}
import io.github.sparkkinesis.options.KinesisOptions
import io.github.sparkkinesis.options.KinesisOptions._

/** Where a query starts, for shards its checkpoint does not know yet. */
sealed trait InitialPosition extends Serializable
object InitialPosition {
  case object Latest extends InitialPosition
  case object TrimHorizon extends InitialPosition
  final case class AtTimestamp(epochMillis: Long) extends InitialPosition
  /** Explicit positions; shards not listed start at their trim horizon. */
  final case class PerShard(positions: Map[ShardKey, ShardPosition]) extends InitialPosition
}

/** Where a bounded read (a batch read, `read_kinesis`, `Trigger.AvailableNow`) ends. */
sealed trait EndPosition extends Serializable
object EndPosition {
  /** The tip seen when the read started ([[RunEnd]]). */
  case object Latest extends EndPosition
  /** Before the first record that arrived at or after `epochMillis` (Kinesis' arrival time), or the tip if sooner. */
  final case class AtTimestamp(epochMillis: Long) extends EndPosition
  /**
   * Up to each named shard's position, included (`After(seq, sub)`: that record is the last read), or its tip if
   * sooner; shards not named end at their tip, unless they descend from a named shard that ends before its end.
   */
  final case class PerShard(positions: Map[ShardKey, ShardPosition]) extends EndPosition {
    /** Where a shard read up to `reached` ends: the named position when it comes first. */
    def clip(key: ShardKey, reached: ShardPosition): ShardPosition = (positions.get(key), reached) match {
      case (None, _) => reached
      case (Some(end), ShardPosition.ShardEnd) => end
      case (Some(end @ ShardPosition.After(_, _)), ShardPosition.After(seq, sub)) =>
        if (executor.SequenceNumbers.isAfter(end, seq, sub)) end else reached
      case (Some(ShardPosition.TrimHorizon), _) => ShardPosition.TrimHorizon
      case _ => reached
    }

    /** Whether a shard read up to `from` has nothing left before its named end (or is not to be read at all). */
    def reached(key: ShardKey, from: Option[ShardPosition]): Boolean = (positions.get(key), from) match {
      case (Some(ShardPosition.TrimHorizon), _) => true
      case (Some(ShardPosition.After(seq, sub)), Some(start: ShardPosition.After)) =>
        !executor.SequenceNumbers.isAfter(start, seq, sub)
      case _ => false
    }

    /** A range ending at `to` in `key` ends at a position the user gave, which need not be a record. */
    def endsAt(key: ShardKey, to: ShardPosition): Boolean = positions.get(key).contains(to)
  }
}

/**
 * `consumerMode=efo`: the consumer to register per stream (`consumerName`, else the prefix and the query id) or
 * the ones given (`registeredConsumers`, ARNs), and the ARNs the driver resolved before the first snapshot.
 */
final case class FanOutConfig(
    consumerName: Option[String],
    consumerNamePrefix: String,
    registeredConsumers: Seq[String],
    deregisterOnStop: Boolean,
    consumerArns: Map[String, String] = Map.empty,
    registeredConsumerName: Option[String] = None,
    registerTimeout: Duration = FanOutConfig.DefaultConsumerTimeout,
    deregisterTimeout: Duration = FanOutConfig.DefaultConsumerTimeout)

object FanOutConfig {
  /** Databricks' default for both of its consumer timeouts. */
  val DefaultConsumerTimeout: Duration = Duration.ofSeconds(300)
}

/** The source's options, parsed and validated once on the driver; shipped to executors with each task. */
final case class SourceConfig(
    streams: Seq[String],
    connection: ConnectionConfig,
    initialPosition: InitialPosition,
    maxRecordsPerFetch: Int,
    maxFetchRateMBps: Option[Double],
    minFetchPeriod: Duration,
    maxFetchDuration: Duration,
    maxRecordsPerTrigger: Option[Long],
    maxRecordsPerShardPerTrigger: Option[Long],
    maxBytesPerTrigger: Option[Long],
    shardsPerTask: Option[Int],
    shardFetchInterval: Duration,
    failOnDataLoss: Boolean,
    fetchBufferSize: Option[Long] = None,
    maxIdlePollInterval: Option[Duration] = None,
    fanOut: Option[FanOutConfig] = None,
    streamArns: Map[String, String] = Map.empty,
    endingPosition: Option[EndPosition] = None,
    realTime: Boolean = false,
    maxPartitions: Option[Int] = None,
    streamsGivenByArn: Boolean = false,
    layout: RowLayout = RowLayout.Kinesis,
    /** `initialPosition` was not given: a streaming query starts at `latest`, a batch read at `trim_horizon`. */
    initialPositionDefaulted: Boolean = false,
    minRecordsPerTrigger: Option[Long] = None,
    /** As given: real-time mode refuses it by name, so the default is applied by [[triggerDelay]]. */
    maxTriggerDelay: Option[Duration] = None) {

  /** How long `minRecordsPerTrigger` may hold a batch back: `maxTriggerDelay`, else Kafka's default. */
  def triggerDelay: Duration = maxTriggerDelay.getOrElse(SourceConfig.DefaultMaxTriggerDelay)

  /** The configuration a batch read (`spark.read`) uses: it starts at the oldest record unless told otherwise. */
  def forBatch: SourceConfig =
    if (initialPositionDefaulted) copy(initialPosition = InitialPosition.TrimHorizon) else this

  /**
   * The longest an idle shard goes unpolled: the option, else 10 s, but in real-time mode `minFetchPeriod`: a
   * real-time query is there for its latency, and pays for it with five calls a second per idle shard.
   */
  def idlePollCap: Duration =
    maxIdlePollInterval.getOrElse(if (realTime) minFetchPeriod else SourceConfig.DefaultMaxIdlePollInterval)

  /**
   * Whether [[idlePollCap]] also caps the idle budget's spacing: when the user chose the cap (or real-time mode
   * did), else the budget governs past 5,000 idle shards in a JVM (see [[executor.ShardFeed.idleWaitNanos]]).
   */
  def idleCapBindsBudget: Boolean = maxIdlePollInterval.isDefined || realTime

  def streamArn(stream: String): Option[String] = streamArns.get(stream)

  /**
   * What a row's stream column holds for `stream`: the stream as the user gave it, its ARN when given by `streamARN`
   * alone, else its name (Databricks documents the column so). Offsets and everything else go by name.
   */
  def streamColumnValue(stream: String): String =
    if (streamsGivenByArn) streamArns.getOrElse(stream, stream) else stream

  /**
   * Shards per task for `shards` shards: the option, or else as many as it takes to have no more tasks than Spark
   * runs at once (`parallelism`, the default parallelism): a snapshot job then runs in one wave, and a batch's
   * tasks (cut like its snapshot's) too. Databricks' `maxPartitions` stands in for `parallelism` when given.
   */
  def shardsPerTaskFor(shards: Int, parallelism: Int): Int = shardsPerTask.getOrElse {
    val tasks = math.max(1, maxPartitions.getOrElse(parallelism))
    math.max(1, (shards + tasks - 1) / tasks)
  }
}

object SourceConfig {
  /** Kinesis allows 5 GetRecords calls per second per shard. */
  val KinesisMinFetchPeriod: Duration = Duration.ofMillis(200)
  val DefaultMaxIdlePollInterval: Duration = Duration.ofSeconds(10)
  /** Kafka's `maxTriggerDelay` default. */
  val DefaultMaxTriggerDelay: Duration = Duration.ofMinutes(15)
  /** Below one full GetRecords response a feed could never hold what one call may return. */
  val MinFetchBufferBytes: Long = 1024L * 1024

  def apply(reader: OptionReader): SourceConfig = {
    val streams = reader.streamNames
    val maxFetchRate = reader.get(MaxFetchRate).map { v =>
      val rate =
        try v.toDouble
        catch { case _: NumberFormatException => reader.fail(MaxFetchRate, v, "a positive number of MB/s, at most 2") }
      if (!(rate > 0 && rate <= 2))
        reader.fail(MaxFetchRate, v, "a positive number of MB/s, at most 2 (the per-shard read quota)")
      rate
    }
    SourceConfig(
      streams = streams,
      connection = reader.connection,
      initialPosition = initialPosition(reader, streams),
      initialPositionDefaulted = reader.get(KinesisOptions.InitialPosition).isEmpty,
      maxRecordsPerFetch = reader.int(MaxRecordsPerFetch, 1, 10000).getOrElse(10000),
      maxFetchRateMBps = maxFetchRate,
      minFetchPeriod = reader.duration(MinFetchPeriod, KinesisMinFetchPeriod).getOrElse(KinesisMinFetchPeriod),
      maxFetchDuration = reader.duration(MaxFetchDuration, Duration.ofMillis(100)).getOrElse(Duration.ofSeconds(10)),
      maxRecordsPerTrigger = reader.long(MaxRecordsPerTrigger, 1),
      maxRecordsPerShardPerTrigger = reader.long(MaxRecordsPerShardPerTrigger, 1),
      maxBytesPerTrigger = reader.bytes(MaxBytesPerTrigger, 1, Long.MaxValue).map(SparkLineSource.maxBytesPerTrigger),
      shardsPerTask = reader.int(ShardsPerTask, 1, 10000),
      shardFetchInterval = reader.duration(ShardFetchInterval, Duration.ofMillis(100)).getOrElse(Duration.ofSeconds(1)),
      failOnDataLoss = reader.boolean(FailOnDataLoss).getOrElse(true),
      fetchBufferSize = reader.bytes(FetchBufferSize, MinFetchBufferBytes, Long.MaxValue),
      maxIdlePollInterval = reader.duration(MaxIdlePollInterval, KinesisMinFetchPeriod),
      fanOut = fanOut(reader, streams),
      streamArns = reader.streamArns,
      streamsGivenByArn = reader.get(StreamName).isEmpty && reader.get(StreamARN).isDefined,
      maxPartitions = reader.int(DatabricksOptions.MaxPartitions, 1, DatabricksOptions.MaxPartitionsLimit),
      endingPosition = endingPosition(reader, streams),
      minRecordsPerTrigger = minRecordsPerTrigger(reader),
      maxTriggerDelay = reader.duration(MaxTriggerDelay, Duration.ofMillis(1))
    )
  }

  /** A minimum above the maximum could never be met: every batch would wait out `maxTriggerDelay`. */
  private def minRecordsPerTrigger(reader: OptionReader): Option[Long] = {
    val min = reader.long(MinRecordsPerTrigger, 1)
    for (m <- min; max <- reader.long(MaxRecordsPerTrigger, 1) if m > max) {
      reader.fail(
        MinRecordsPerTrigger,
        m.toString,
        s"at most maxRecordsPerTrigger ($max): a batch never holds more than that, so it would always wait out " +
          "maxTriggerDelay"
      )
    }
    min
  }

  /** `endingPosition` bounds a read: a streaming query with another trigger than AvailableNow fails rather than
   * run without its end. */
  def refuseEndingPositionForStreaming(config: SourceConfig): Unit = config.endingPosition.foreach { v =>
    val value = v match {
      case EndPosition.Latest => "latest"
      case EndPosition.AtTimestamp(_) => "at_timestamp"
      case EndPosition.PerShard(_) => "{...}"
    }
    throw new KinesisOptionException(s"Option '${KinesisOptions.EndingPosition.key}' (value '$value') bounds batch " +
      "reads and Trigger.AvailableNow: remove it, or run the streaming query with Trigger.AvailableNow.")
  }

  private def endingPosition(reader: OptionReader, streams: Seq[String]): Option[EndPosition] =
    reader.get(KinesisOptions.EndingPosition).map { v =>
      v.toLowerCase(java.util.Locale.ROOT) match {
        case _ if v.trim.startsWith("{") => EndPosition.PerShard(endingJson(reader, v, streams))
        case "latest" => EndPosition.Latest
        case "at_timestamp" =>
          val ts = reader.required(EndingTimestamp, "an ISO-8601 instant (2025-01-31T12:00:00Z) or epoch milliseconds")
          val end = parseTimestamp(reader, EndingTimestamp, ts)
          reader.get(KinesisOptions.InitialPosition).map(_.toLowerCase(java.util.Locale.ROOT)) match {
            case Some("at_timestamp") =>
              reader.get(InitialTimestamp).map(parseTimestamp(reader, InitialTimestamp, _)).filter(_ >= end).foreach {
                start =>
                  reader.fail(
                    EndingTimestamp,
                    ts,
                    s"a time after initialTimestamp (${Instant.ofEpochMilli(start)}): " +
                      "the read would end before it starts")
              }
            case _ =>
          }
          EndPosition.AtTimestamp(end)
        case _ => reader.fail(
            KinesisOptions.EndingPosition,
            v,
            "latest (the tip when the read starts), at_timestamp (with endingTimestamp: before the first record " +
              "that arrived at or after it), or per-shard positions in initialPosition's JSON form or a " +
              "checkpoint's offset JSON"
          )
      }
    }

  /**
   * Per-shard ends: initialPosition's form (`at_sequence_number`: that record is not read; `after_sequence_number`:
   * it is the last read), or an offset as a query's checkpoint holds it (`offsets/<batch>`'s last line), which bounds
   * a batch read to exactly what that batch had read.
   */
  private def endingJson(reader: OptionReader, raw: String, streams: Seq[String]): Map[ShardKey, ShardPosition] = {
    val root =
      try new ObjectMapper().readTree(raw)
      catch { case NonFatal(_) => reader.fail(KinesisOptions.EndingPosition, raw, "a JSON object") }
    if (!root.isObject) reader.fail(KinesisOptions.EndingPosition, raw, "a JSON object")
    if (root.has("version") && root.has("streams")) {
      val offset =
        try KinesisSourceOffset.fromJson(raw)
        catch { case e: IllegalArgumentException => reader.fail(KinesisOptions.EndingPosition, raw, e.getMessage) }
      val others = offset.streams -- streams
      if (others.nonEmpty) reader.fail(
        KinesisOptions.EndingPosition,
        raw,
        s"an offset of the streams read (${streams.mkString(", ")}), not of ${others.mkString(", ")}")
      offset.positions
    } else perShard(reader, KinesisOptions.EndingPosition, raw, root, streams)
  }

  /** Registration needs a second at least (a consumer is CREATING for seconds); a stop may choose not to wait. */
  private def consumerTimeouts(reader: OptionReader): (Duration, Duration) = (
    reader.duration(RegisterConsumerTimeoutInterval, Duration.ofSeconds(1)).getOrElse(
      FanOutConfig.DefaultConsumerTimeout),
    reader.duration(DeregisterConsumerTimeoutInterval).getOrElse(FanOutConfig.DefaultConsumerTimeout))

  private def fanOut(reader: OptionReader, streams: Seq[String]): Option[FanOutConfig] = {
    // requireConsumerDeregistration=false asks for nothing, in either mode.
    val efoOnly =
      Seq(ConsumerName, ConsumerNamePrefix, RegisteredConsumerId, DatabricksOptions.RegisteredConsumerIdType) ++
        (if (reader.boolean(RequireConsumerDeregistration).contains(true)) Seq(RequireConsumerDeregistration) else Nil)
    reader.oneOf(ConsumerMode, Seq("polling", "efo")).map(_.toLowerCase(java.util.Locale.ROOT)).getOrElse(
      "polling") match {
      case "polling" =>
        // Checked, not refused: a job's timeouts for consumers it does not register are harmless.
        consumerTimeouts(reader)
        efoOnly.find(o => reader.get(o).isDefined).foreach { o =>
          throw new KinesisOptionException(s"Option '${o.key}' applies only with consumerMode=efo (enhanced " +
            s"fan-out): set consumerMode=efo, or remove '${o.key}'.")
        }
        None
      case _ =>
        def name(o: KinesisOption, v: String) = {
          if (!v.matches(ConsumerNames.NamePattern)) reader.fail(o, v, "1 to 128 letters, digits, '_', '.' or '-'")
          v
        }
        val ids = reader.get(RegisteredConsumerId).toSeq.flatMap(_.split(",").map(_.trim).filter(_.nonEmpty))
        val byName =
          reader.oneOf(DatabricksOptions.RegisteredConsumerIdType, DatabricksOptions.RegisteredConsumerIdTypes)
            .exists(_.equalsIgnoreCase("name"))
        val registeredName = if (!byName) None
        else {
          val v =
            reader.required(RegisteredConsumerId, "the name of a registered consumer (registeredConsumerIdType=name)")
          if (ids.size != 1 || ConsumerNames.isConsumerArn(ids.head)) reader.fail(
            RegisteredConsumerId,
            v,
            "one consumer name, looked up on every stream read (with registeredConsumerIdType=name; ARNs need " +
              "registeredConsumerIdType=arn)"
          )
          reader.get(ConsumerName).foreach(_ =>
            throw new KinesisOptionException("Options 'consumerName' and " +
              "'registeredConsumerId' both name the consumer: keep one (consumerName registers it when missing, " +
              "registeredConsumerId needs it registered)."))
          Some(name(RegisteredConsumerId, ids.head))
        }
        val registered = if (byName) Nil else ids
        registered.find(!ConsumerNames.isConsumerArn(_)).foreach(v =>
          reader.fail(
            RegisteredConsumerId,
            v,
            "consumer ARNs (arn:aws:kinesis:<region>:<account>:stream/<stream>/consumer/<name>:<created>), one per " +
              "stream, or set registeredConsumerIdType=name to give a consumer's name"
          ))
        if (registered.map(ConsumerNames.streamOf).distinct.size != registered.size)
          reader.fail(RegisteredConsumerId, registered.mkString(","), "at most one consumer ARN per stream")
        val prefix = reader.get(ConsumerNamePrefix).map(name(ConsumerNamePrefix, _)).getOrElse("spark-kinesis_")
        if (prefix.length > 90)
          reader.fail(ConsumerNamePrefix, prefix, "at most 90 characters (the query id follows it)")
        Some(FanOutConfig(
          consumerName = reader.get(ConsumerName).map(name(ConsumerName, _)),
          consumerNamePrefix = prefix,
          registeredConsumers = registered,
          deregisterOnStop = reader.boolean(RequireConsumerDeregistration).getOrElse(false),
          registeredConsumerName = registeredName,
          registerTimeout = consumerTimeouts(reader)._1,
          deregisterTimeout = consumerTimeouts(reader)._2
        ))
    }
  }

  private val accepted = "latest, trim_horizon, earliest, at_timestamp (with initialTimestamp), " +
    """{"at_timestamp": "<time>", "format": "<DateTimeFormatter pattern>"}, or a JSON map of per-shard positions """ +
    """such as {"shardId-000000000000":{"at_sequence_number":"4959..."}}"""

  private def initialPosition(reader: OptionReader, streams: Seq[String]): InitialPosition = {
    val raw = reader.get(KinesisOptions.InitialPosition).getOrElse("latest")
    raw.toLowerCase(java.util.Locale.ROOT) match {
      case "latest" => InitialPosition.Latest
      case "trim_horizon" | "earliest" => InitialPosition.TrimHorizon
      case "at_timestamp" =>
        val ts = reader.required(InitialTimestamp, "an ISO-8601 instant (2025-01-31T12:00:00Z) or epoch milliseconds")
        InitialPosition.AtTimestamp(parseTimestamp(reader, InitialTimestamp, ts))
      case _ if raw.trim.startsWith("{") => json(reader, raw, streams)
      case _ => reader.fail(KinesisOptions.InitialPosition, raw, accepted)
    }
  }

  private def parseTimestamp(reader: OptionReader, option: KinesisOption, ts: String): Long =
    if (ts.matches("\\d+")) ts.toLong
    else
      try Instant.parse(ts).toEpochMilli
      catch {
        case _: DateTimeParseException =>
          reader.fail(option, ts, "an ISO-8601 instant such as 2025-01-31T12:00:00Z, or epoch milliseconds")
      }

  /**
   * Databricks' `{"at_timestamp": ..., "format": ...}`, told from a per-stream map by its value: a stream's entry is
   * an object, a time is not.
   */
  private def json(reader: OptionReader, raw: String, streams: Seq[String]): InitialPosition = {
    val root =
      try new ObjectMapper().readTree(raw)
      catch { case NonFatal(_) => reader.fail(KinesisOptions.InitialPosition, raw, accepted) }
    if (!root.isObject) reader.fail(KinesisOptions.InitialPosition, raw, accepted)
    val at = root.get("at_timestamp")
    if (at != null && at.isValueNode) InitialPosition.AtTimestamp(DatabricksTimestamp.parse(reader, raw, root))
    else InitialPosition.PerShard(perShard(reader, KinesisOptions.InitialPosition, raw, root, streams))
  }

  /** `{"shardId": pos}` for a single stream, or `{"stream": {"shardId": pos}}`. */
  private def perShard(
      reader: OptionReader,
      option: KinesisOption,
      raw: String,
      root: JsonNode,
      streams: Seq[String]): Map[ShardKey, ShardPosition] = {
    val byStream: Seq[(String, JsonNode)] =
      if (root.fieldNames().asScala.forall(streams.contains))
        root.properties().asScala.map(e => e.getKey -> e.getValue).toSeq
      else if (streams.size == 1) Seq(streams.head -> root)
      else reader.fail(option, raw, s"per-stream maps keyed by the stream names ${streams.mkString(", ")}")
    for {
      (stream, shards) <- byStream.toMap
      entry <- shards.properties().asScala
    } yield ShardKey(stream, entry.getKey) -> position(reader, option, raw, entry.getValue)
  }

  private def position(reader: OptionReader, option: KinesisOption, raw: String, node: JsonNode): ShardPosition = {
    def sub = if (node.has("sub")) Some(node.get("sub").asLong()) else None
    if (node.has("at_sequence_number")) {
      // At (seq, s) includes sub-record s: everything before it counts as read.
      ShardPosition.After(seqText(reader, option, raw, node.get("at_sequence_number")), sub.getOrElse(0L) - 1)
    } else if (node.has("after_sequence_number")) {
      ShardPosition.After(seqText(reader, option, raw, node.get("after_sequence_number")), sub.getOrElse(Long.MaxValue))
    } else if (node.has("at_timestamp") && option == KinesisOptions.InitialPosition) {
      // Kafka's startingOffsetsByTimestamp, per shard: from the first record that arrived at or after it.
      ShardPosition.AtTimestamp(parseTimestamp(reader, option, node.get("at_timestamp").asText()))
    } else if (node.isTextual && node.asText().equalsIgnoreCase("trim_horizon")) ShardPosition.TrimHorizon
    else reader.fail(
      option,
      raw,
      """shard positions {"at_sequence_number":"<seq>"} or {"after_sequence_number":"<seq>"}, each with an """ +
        """optional "sub"""" + (if (option == KinesisOptions.InitialPosition)
                                  """, or {"at_timestamp":"<ISO-8601 instant or epoch ms>"}"""
                                else "; one time for every shard is endingPosition=at_timestamp with endingTimestamp")
    )
  }

  private def seqText(reader: OptionReader, option: KinesisOption, raw: String, node: JsonNode): String = {
    val s = node.asText()
    if (!s.matches("\\d{1,128}"))
      reader.fail(option, raw, "sequence numbers as strings of digits")
    s
  }
}
