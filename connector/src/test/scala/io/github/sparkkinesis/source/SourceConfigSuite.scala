package io.github.sparkkinesis.source

import io.github.sparkkinesis.options.{KinesisOptionException, OptionReader}
import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite

class SourceConfigSuite extends AnyFunSuite {
  private def config(kv: (String, String)*) =
    SourceConfig(OptionReader(kv.toMap + ("streamName" -> kv.toMap.getOrElse("streamName", "s"))))

  test("defaults follow the option table") {
    val c = config()
    assert(c.initialPosition == InitialPosition.Latest)
    assert(
      c.maxRecordsPerFetch == 10000 && c.shardsPerTask.isEmpty && c.shardsPerTaskFor(8, 2) == 4 && c.shardsPerTaskFor(
        3,
        4) == 1 && c.failOnDataLoss)
    assert(c.minFetchPeriod.toMillis == 200 && c.maxFetchDuration.toSeconds == 10 && c.shardFetchInterval.toSeconds == 1)
  }

  test("initial positions: names, timestamps and per-shard JSON") {
    assert(config("initialPosition" -> "earliest").initialPosition == InitialPosition.TrimHorizon)
    assert(config("initialPosition" -> "at_timestamp", "initialTimestamp" -> "2025-01-31T12:00:00Z").initialPosition ==
      InitialPosition.AtTimestamp(1738324800000L))
    assert(config("initialPosition" -> "at_timestamp", "initialTimestamp" -> "1738324800000").initialPosition ==
      InitialPosition.AtTimestamp(1738324800000L))
    val json = """{"shardId-0":{"at_sequence_number":"100","sub":2},"shardId-1":{"after_sequence_number":"200"}}"""
    assert(config("initialPosition" -> json).initialPosition == InitialPosition.PerShard(Map(
      ShardKey("s", "shardId-0") -> After("100", 1),
      ShardKey("s", "shardId-1") -> After("200", Long.MaxValue))))
    val twoStreams = """{"a":{"shardId-0":{"after_sequence_number":"5","sub":0}}}"""
    assert(config("streamName" -> "a,b", "initialPosition" -> twoStreams).initialPosition ==
      InitialPosition.PerShard(Map(ShardKey("a", "shardId-0") -> After("5", 0))))
    val times = """{"shardId-0":{"at_timestamp":"2025-01-31T12:00:00Z"},"shardId-1":{"at_timestamp":1738324800001}}"""
    assert(config("initialPosition" -> times).initialPosition == InitialPosition.PerShard(Map(
      ShardKey("s", "shardId-0") -> AtTimestamp(1738324800000L),
      ShardKey("s", "shardId-1") -> AtTimestamp(1738324800001L))))
  }

  test("per-shard times start a read, never end one (endingTimestamp does); a bad time names the option") {
    def error(kv: (String, String)*) = intercept[KinesisOptionException](config(kv: _*)).getMessage
    assert(error("initialPosition" -> """{"shardId-0":{"at_timestamp":"noon"}}""") == "Invalid value 'noon' for " +
      "option 'initialPosition': expected an ISO-8601 instant such as 2025-01-31T12:00:00Z, or epoch milliseconds.")
    assert(error("endingPosition" -> """{"shardId-0":{"at_timestamp":"2025-01-31T12:00:00Z"}}""")
      .contains("one time for every shard is endingPosition=at_timestamp with endingTimestamp"))
  }

  test("per-shard ends: a shard is done once read up to its end, and a range ending there may end between records") {
    val ends = EndPosition.PerShard(Map(ShardKey("s", "a") -> After("100", 2), ShardKey("s", "b") -> TrimHorizon))
    val (a, b, c) = (ShardKey("s", "a"), ShardKey("s", "b"), ShardKey("s", "c"))
    assert(!ends.reached(a, Some(After("100", 1))) && ends.reached(a, Some(After("100", 2))))
    assert(ends.reached(a, Some(After("101", 0))) && !ends.reached(a, Some(TrimHorizon)) && !ends.reached(a, None))
    assert(ends.reached(b, None) && !ends.reached(c, Some(After("5", 0))))
    assert(ends.clip(a, After("150", 0)) == After("100", 2) && ends.clip(a, After("99", 0)) == After("99", 0))
    assert(ends.endsAt(a, After("100", 2)) && !ends.endsAt(a, After("99", 0)) && !ends.endsAt(c, ShardEnd))
  }

  test("bad source values name the option and what is accepted") {
    def error(kv: (String, String)*) = intercept[KinesisOptionException](config(kv: _*)).getMessage
    assert(error("initialTimestamp" -> "x", "initialPosition" -> "at_timestamp").contains("'initialTimestamp'"))
    assert(error("initialPosition" -> """{"shardId-0":{"at_sequence_number":"abc"}}""").contains("strings of digits"))
    assert(error("maxFetchRate" -> "5").contains("at most 2 (the per-shard read quota)"))
    assert(error("shardsPerTask" -> "0").contains("'shardsPerTask': expected an integer in 1..10000"))
  }

  test("minimum batches: minRecordsPerTrigger with maxTriggerDelay (default 15 min), never above the maximum") {
    assert(config().minRecordsPerTrigger.isEmpty && config().triggerDelay.toMinutes == 15)
    val c = config("minRecordsPerTrigger" -> "500", "maxTriggerDelay" -> "30s")
    assert(c.minRecordsPerTrigger.contains(500L) && c.maxTriggerDelay.map(_.toMillis).contains(30000L))
    def error(kv: (String, String)*) = intercept[KinesisOptionException](config(kv: _*)).getMessage
    assert(error("minRecordsPerTrigger" -> "0").contains("'minRecordsPerTrigger'"))
    assert(error("maxTriggerDelay" -> "soon").contains("'maxTriggerDelay'"))
    assert(error("minRecordsPerTrigger" -> "500", "maxRecordsPerTrigger" -> "100") ==
      "Invalid value '500' for option 'minRecordsPerTrigger': expected at most maxRecordsPerTrigger (100): a batch " +
      "never holds more than that, so it would always wait out maxTriggerDelay.")
  }

  test("enhanced fan-out: the consumer timeouts (Databricks' names) are read in ms, default 300 s, checked in both modes") {
    val efo = config(
      "consumerMode" -> "efo",
      "registerConsumerTimeoutInterval" -> "45s",
      "deregisterConsumerTimeoutInterval" -> "0").fanOut.get
    assert(efo.registerTimeout == java.time.Duration.ofSeconds(45) && efo.deregisterTimeout == java.time.Duration.ZERO)
    val defaults = config("consumerMode" -> "efo").fanOut.get
    assert(defaults.registerTimeout == java.time.Duration.ofSeconds(300) && defaults.deregisterTimeout == defaults.registerTimeout)
    assert(config("registerConsumerTimeoutInterval" -> "10s").fanOut.isEmpty) // polling: accepted, unused
    def error(kv: (String, String)*) = intercept[KinesisOptionException](config(kv: _*)).getMessage
    assert(error("registerConsumerTimeoutInterval" -> "soon") == "Invalid value 'soon' for option " +
      "'registerConsumerTimeoutInterval': expected a duration such as 200ms, 10s or 1min, at least 1000ms.")
    assert(error("consumerMode" -> "efo", "registerConsumerTimeoutInterval" -> "500ms")
      .contains("'registerConsumerTimeoutInterval': expected a duration"))
    assert(error("deregisterConsumerTimeoutInterval" -> "-1s").contains("'deregisterConsumerTimeoutInterval'"))
  }

  test("enhanced fan-out: consumer options parsed with consumerMode=efo, refused without it") {
    assert(
      config().fanOut.isEmpty && config("consumerMode" -> "polling", "requireConsumerDeregistration" -> "false").fanOut.isEmpty)
    assert(config("consumerMode" -> "efo").fanOut.contains(FanOutConfig(
      None,
      "spark-kinesis_",
      Nil,
      deregisterOnStop = false)))
    val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/s/consumer/mine:1700000000"
    assert(config(
      "consumerMode" -> "EFO",
      "consumerName" -> "app.1",
      "registeredConsumerId" -> arn,
      "requireConsumerDeregistration" -> "true").fanOut.contains(FanOutConfig(
      Some("app.1"),
      "spark-kinesis_",
      Seq(arn),
      deregisterOnStop = true)))
    def error(kv: (String, String)*) = intercept[KinesisOptionException](config(kv: _*)).getMessage
    assert(error("consumerName" -> "x") ==
      "Option 'consumerName' applies only with consumerMode=efo (enhanced fan-out): set consumerMode=efo, or remove 'consumerName'.")
    assert(error("requireConsumerDeregistration" -> "true").contains(
      "'requireConsumerDeregistration' applies only with consumerMode=efo"))
    assert(error("consumerMode" -> "efo", "consumerName" -> "a b").contains(
      "'consumerName': expected 1 to 128 letters, digits"))
    assert(error("consumerMode" -> "efo", "consumerNamePrefix" -> ("p" * 91)).contains("at most 90 characters"))
    assert(error("consumerMode" -> "efo", "registeredConsumerId" -> "my-consumer").contains(
      "'registeredConsumerId': expected consumer ARNs"))
    assert(error("consumerMode" -> "efo", "registeredConsumerId" -> s"$arn,${arn.replace("mine", "other")}")
      .contains("at most one consumer ARN per stream"))
    assert(ConsumerNames.streamOf(arn) == "s")
  }

  test("streamARN names the streams instead of streamName, or matches it") {
    val arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks"
    val other = "arn:aws:kinesis:eu-west-1:210987654321:stream/orders"
    val c = SourceConfig(OptionReader(Map("streamARN" -> s"$other, $arn")))
    assert(c.streams == Seq("orders", "clicks") && c.streamArn("clicks").contains(arn) && c.streamArn("orders").contains(
      other))
    assert(config("streamName" -> "clicks", "streamARN" -> arn).streamArns == Map("clicks" -> arn))
    def error(kv: (String, String)*) =
      intercept[KinesisOptionException](SourceConfig(OptionReader(kv.toMap))).getMessage
    assert(error("streamARN" -> "clicks").contains("'streamARN': expected stream ARNs"))
    assert(error("streamName" -> "views", "streamARN" -> arn).contains(
      "the streams of streamName (views), or leave streamName out"))
    assert(error("streamARN" -> s"$arn,$arn").contains("one ARN per stream"))
    assert(error().contains("Option 'streamName' is required"))
  }

  test("the stream column holds what was given: the ARN with streamARN alone, else the name") {
    val arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks"
    val other = "arn:aws:kinesis:eu-west-1:210987654321:stream/orders"
    val byArn = SourceConfig(OptionReader(Map("streamARN" -> s"$arn,$other")))
    assert(byArn.streams.map(byArn.streamColumnValue) == Seq(arn, other))
    assert(config("streamName" -> "clicks", "streamARN" -> arn).streamColumnValue("clicks") == "clicks")
    assert(config("streamName" -> "clicks").streamColumnValue("clicks") == "clicks")
  }

  test("the idle budget governs past the default maxIdlePollInterval; a cap the user sets, or real-time mode, binds it") {
    assert(!config().idleCapBindsBudget && config().idlePollCap == java.time.Duration.ofSeconds(10))
    assert(config("maxIdlePollInterval" -> "10s").idleCapBindsBudget)
    assert(config().copy(realTime = true).idleCapBindsBudget)
  }
}
