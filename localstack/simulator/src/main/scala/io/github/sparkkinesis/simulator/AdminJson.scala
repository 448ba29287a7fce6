package io.github.sparkkinesis.simulator

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import scala.jdk.CollectionConverters._

/** The admin API's JSON shapes for settings, fault rules and counters, in both directions. */
object AdminJson {
  def settings(mapper: ObjectMapper, s: Settings): ObjectNode = {
    val node = mapper.createObjectNode()
    val q = node.putObject("quotas")
    q.put("enabled", s.quotas.enabled).put("factor", s.quotas.factor).put("writeBytes", s.quotas.writeBytes)
      .put("writeRecords", s.quotas.writeRecords).put("readCalls", s.quotas.readCalls).put("readBytes", s.quotas.readBytes)
      .put("listShards", s.quotas.listShards).put("describeStreamSummary", s.quotas.describeStreamSummary)
      .put("getShardIterator", s.quotas.getShardIterator).put("consumersPerStream", s.quotas.consumersPerStream)
    node.put("iteratorExpiryMillis", s.iteratorExpiryMillis)
    s.retentionMillis match {
      case Some(r) => node.put("retentionMillis", r)
      case None => node.putNull("retentionMillis")
    }
    node.put("consumerActivationMillis", s.consumerActivationMillis)
      .put("subscriptionDurationMillis", s.subscriptionDurationMillis)
      .put("subscriptionHeartbeatMillis", s.subscriptionHeartbeatMillis)
      .put("clockOffsetMs", s.clockOffsetMs)
      .put("splitEndAnswer", s.splitEndAnswer)
    node
  }

  private val quotaFields = Set("enabled", "factor", "writeBytes", "writeRecords", "readCalls", "readBytes",
    "listShards", "describeStreamSummary", "getShardIterator", "consumersPerStream")

  /** The settings with the fields present in `patch` changed; unknown fields are an error, not silently ignored. */
  def patchSettings(s: Settings, patch: JsonNode): Settings = {
    unknown(patch, Set("quotas", "iteratorExpiryMillis", "retentionMillis", "consumerActivationMillis",
      "subscriptionDurationMillis", "subscriptionHeartbeatMillis", "clockOffsetMs", "splitEndAnswer"), "settings")
    val q = Option(patch.get("quotas")).map { qp =>
      unknown(qp, quotaFields, "quotas")
      def flag(name: String, current: Boolean) = Option(qp.get(name)).map(_.asBoolean()).getOrElse(current)
      val old = s.quotas
      QuotaSettings(flag("enabled", old.enabled), Option(qp.get("factor")).map(_.asDouble()).getOrElse(old.factor),
        flag("writeBytes", old.writeBytes), flag("writeRecords", old.writeRecords), flag("readCalls", old.readCalls),
        flag("readBytes", old.readBytes), flag("listShards", old.listShards),
        flag("describeStreamSummary", old.describeStreamSummary), flag("getShardIterator", old.getShardIterator),
        Option(qp.get("consumersPerStream")).map { n =>
          if (!n.isIntegralNumber || !n.canConvertToInt)
            throw new IllegalArgumentException(s"consumersPerStream is a whole number, got $n")
          n.asInt()
        }.getOrElse(old.consumersPerStream))
    }.getOrElse(s.quotas)
    val expiry = Option(patch.get("iteratorExpiryMillis")).map(_.asLong()).getOrElse(s.iteratorExpiryMillis)
    val retention = Option(patch.get("retentionMillis")) match {
      case None => s.retentionMillis
      case Some(n) if n.isNull => None
      case Some(n) => Some(n.asLong())
    }
    def millis(name: String, current: Long) = Option(patch.get(name)).map(_.asLong()).getOrElse(current)
    // Jackson reads "yes" as false and 1.5 as 1: a typo in a test's setting must fail, not quietly mean another one.
    val offset = Option(patch.get("clockOffsetMs")).map { n =>
      if (!n.isIntegralNumber || !n.canConvertToLong)
        throw new IllegalArgumentException(s"clockOffsetMs is a whole number of milliseconds, got $n")
      n.asLong()
    }.getOrElse(s.clockOffsetMs)
    val splitEnd = Option(patch.get("splitEndAnswer")).map { n =>
      if (!n.isBoolean) throw new IllegalArgumentException(s"splitEndAnswer is true or false, got $n")
      n.asBoolean()
    }.getOrElse(s.splitEndAnswer)
    Settings(q, expiry, retention, millis("consumerActivationMillis", s.consumerActivationMillis),
      millis("subscriptionDurationMillis", s.subscriptionDurationMillis),
      millis("subscriptionHeartbeatMillis", s.subscriptionHeartbeatMillis), offset, splitEnd)
  }

  private def unknown(node: JsonNode, known: Set[String], what: String): Unit = {
    val extra = node.fieldNames().asScala.filterNot(known).toSeq
    if (extra.nonEmpty) throw new IllegalArgumentException(
      s"unknown $what field(s) ${extra.mkString(", ")}; known: ${known.toSeq.sorted.mkString(", ")}")
  }

  private val ruleFields = Set("kind", "operations", "stream", "probability", "maxCount", "latencyMillis",
    "hangMillis", "partitionKeys", "afterEvents", "exceptionType")

  def rule(node: JsonNode): FaultRule = {
    unknown(node, ruleFields, "fault rule")
    def strings(name: String) = Option(node.get(name)).map(_.elements().asScala.map(_.asText()).toSet).getOrElse(Set.empty)
    val defaults = FaultRule(FaultKind.Http500)
    FaultRule(
      kind = FaultKind.named(Option(node.get("kind")).map(_.asText()).getOrElse(
        throw new IllegalArgumentException("a fault rule needs a kind"))),
      operations = strings("operations"),
      stream = Option(node.get("stream")).filterNot(_.isNull).map(_.asText()),
      probability = Option(node.get("probability")).map(_.asDouble()).getOrElse(defaults.probability),
      maxCount = Option(node.get("maxCount")).filterNot(_.isNull).map(_.asLong()),
      latencyMillis = Option(node.get("latencyMillis")).map(_.asLong()).getOrElse(defaults.latencyMillis),
      hangMillis = Option(node.get("hangMillis")).map(_.asLong()).getOrElse(defaults.hangMillis),
      partitionKeys = strings("partitionKeys"),
      afterEvents = Option(node.get("afterEvents")).map(_.asInt()).getOrElse(defaults.afterEvents),
      exceptionType = Option(node.get("exceptionType")).map(_.asText()).getOrElse(defaults.exceptionType))
  }

  def faults(mapper: ObjectMapper, faults: Faults): ObjectNode = {
    val node = mapper.createObjectNode()
    node.put("seed", faults.seed)
    val rules = node.putArray("rules")
    faults.rules.foreach { r =>
      val n = rules.addObject().put("kind", r.kind.name)
      val ops = n.putArray("operations"); r.operations.toSeq.sorted.foreach(ops.add)
      r.stream.foreach(n.put("stream", _))
      n.put("probability", r.probability)
      r.maxCount.foreach(n.put("maxCount", _))
      n.put("latencyMillis", r.latencyMillis).put("hangMillis", r.hangMillis)
      val keys = n.putArray("partitionKeys"); r.partitionKeys.toSeq.sorted.foreach(keys.add)
      n.put("afterEvents", r.afterEvents).put("exceptionType", r.exceptionType)
      n.put("fired", r.firedCount)
    }
    node
  }

  private def operation(node: ObjectNode, c: OperationCounters): Unit =
    node.put("calls", c.calls).put("errors", c.errors).put("throttled", c.throttled).put("faults", c.faults)

  def counters(mapper: ObjectMapper, counters: Counters): ObjectNode = {
    val node = mapper.createObjectNode()
    val ops = node.putObject("operations")
    counters.operations.toSeq.sortBy(_._1).foreach { case (op, c) => operation(ops.putObject(op), c) }
    val formats = node.putObject("requestsByFormat")
    counters.requestsByFormat.toSeq.sorted.foreach { case (format, n) => formats.put(format, n) }
    val streams = node.putObject("streams")
    def stream(name: String) = Option(streams.get(name).asInstanceOf[ObjectNode]).getOrElse {
      val s = streams.putObject(name); s.putObject("operations"); s.putObject("shards"); s
    }
    counters.streamOperations.toSeq.sortBy(_._1).foreach { case ((s, op), c) =>
      operation(stream(s).get("operations").asInstanceOf[ObjectNode].putObject(op), c)
    }
    counters.listedShards.toSeq.sorted.foreach { case (s, n) => stream(s).put("listedShards", n) }
    counters.shards.toSeq.sortBy(_._1).foreach { case ((s, id), c) =>
      stream(s).get("shards").asInstanceOf[ObjectNode].putObject(id)
        .put("putRecords", c.putRecords).put("putBytes", c.putBytes)
        .put("throttledPutRecords", c.throttledPutRecords).put("failedPutRecords", c.failedPutRecords)
        .put("getRecordsCalls", c.getRecordsCalls).put("throttledGetRecordsCalls", c.throttledGetRecordsCalls)
        .put("getRecordsRecords", c.getRecordsRecords).put("getRecordsBytes", c.getRecordsBytes)
        .put("getShardIteratorCalls", c.getShardIteratorCalls)
        .put("throttledGetShardIteratorCalls", c.throttledGetShardIteratorCalls)
        .put("subscriptions", c.subscriptions).put("throttledSubscriptions", c.throttledSubscriptions)
        .put("expiredSubscriptions", c.expiredSubscriptions).put("cutSubscriptions", c.cutSubscriptions)
        .put("subscriptionEvents", c.subscriptionEvents).put("subscriptionRecords", c.subscriptionRecords)
        .put("subscriptionBytes", c.subscriptionBytes)
    }
    node
  }
}
