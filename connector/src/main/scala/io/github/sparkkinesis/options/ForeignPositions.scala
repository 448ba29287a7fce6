package io.github.sparkkinesis.options

import java.time.{Instant, OffsetDateTime}
import java.time.format.DateTimeParseException
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.JsonNodeFactory

/**
 * The start positions of the AWS Labs (`kinesis.startingPosition`) and Qubole (`startingPosition`) connectors as our
 * `initialPosition` (and `initialTimestamp`). Both take LATEST, TRIM_HORIZON, EARLIEST and a JSON map of per-shard
 * positions shaped like their offsets (`{"shardId-…": {"iteratorType": "AFTER_SEQUENCE_NUMBER", "iteratorPosition":
 * "…", "subSequenceNumber": "…"}, "metadata": {…}}`); AWS Labs' also `AT_TIMESTAMP <ISO-8601 time>`.
 */
private[options] object ForeignPositions {
  private val Words = Map("latest" -> "latest", "trim_horizon" -> "trim_horizon", "earliest" -> "trim_horizon")
  private val AtTimestamp = "at_timestamp"

  def read(v: ForeignValue, withTimestamp: Boolean): Seq[(KinesisOption, String)] = {
    val accepted = "LATEST, TRIM_HORIZON, EARLIEST" + (if (withTimestamp) ", AT_TIMESTAMP <time>" else "") +
      """ or a JSON map of shard positions ({"shardId-…": {"iteratorType": "AT_SEQUENCE_NUMBER", "iteratorPosition": "…"}})"""
    val lower = v.value.toLowerCase(Locale.ROOT)
    Words.get(lower) match {
      case Some(ours) => Seq(KinesisOptions.InitialPosition -> ours)
      case None if withTimestamp && lower.startsWith(AtTimestamp) =>
        val time = v.value.substring(AtTimestamp.length).trim
        Seq(
          KinesisOptions.InitialPosition -> AtTimestamp,
          KinesisOptions.InitialTimestamp -> millis(time).getOrElse(
            v.fail(
              "AT_TIMESTAMP followed by an ISO-8601 time such as 2023-08-30T19:00:05Z or 2023-08-30T19:00:05-08:00")).toString
        )
      case None if v.value.startsWith("{") => Seq(KinesisOptions.InitialPosition -> perShard(v, accepted))
      case None => v.fail(accepted)
    }
  }

  private def millis(time: String): Option[Long] =
    try Some(OffsetDateTime.parse(time).toInstant.toEpochMilli)
    catch {
      case _: DateTimeParseException =>
        try Some(Instant.parse(time).toEpochMilli)
        catch { case _: DateTimeParseException => None }
    }

  /** Their per-shard map as ours; the `metadata` entry (stream name, batch id) is theirs alone and dropped. */
  private def perShard(v: ForeignValue, accepted: String): String = {
    val root =
      try new ObjectMapper().readTree(v.value)
      catch { case NonFatal(_) => v.fail(accepted) }
    if (root == null || !root.isObject) v.fail(accepted)
    val out = JsonNodeFactory.instance.objectNode()
    for (e <- root.properties().asScala if e.getKey != "metadata") {
      val shard = e.getValue
      def text(field: String) = Option(shard.get(field)).filter(!_.isNull).map(_.asText)
      val position = text("iteratorPosition").getOrElse("")
      val sub = text("subSequenceNumber").flatMap(s => scala.util.Try(s.toLong).toOption).filter(_ >= 0)
      val entry = JsonNodeFactory.instance.objectNode()
      text("iteratorType").map(_.toUpperCase(Locale.ROOT)) match {
        case Some("TRIM_HORIZON") => out.put(e.getKey, "trim_horizon")
        case Some(t @ ("AT_SEQUENCE_NUMBER" | "AFTER_SEQUENCE_NUMBER")) if position.matches("\\d+") =>
          entry.put(t.toLowerCase(Locale.ROOT), position)
          sub.foreach(entry.put("sub", _))
          out.set(e.getKey, entry)
        case other => v.fail(s"per-shard positions of type AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER (with a " +
            s"sequence number as iteratorPosition) or TRIM_HORIZON; shard ${e.getKey} has ${other.getOrElse("no iteratorType")}" +
            " (for LATEST or AT_TIMESTAMP give the word instead of a map)")
      }
    }
    if (out.isEmpty) v.fail(accepted)
    out.toString
  }
}
