package io.github.sparkkinesis.source

import java.text.{ParsePosition, SimpleDateFormat}
import java.time.{Instant, LocalDate, LocalDateTime, OffsetDateTime, ZoneOffset}
import java.time.format.DateTimeFormatter
import java.time.temporal.{ChronoField, TemporalAccessor}
import java.util.{Locale, TimeZone}

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.JsonNode

import io.github.sparkkinesis.options.{KinesisOptions, OptionReader}

/**
 * The time in Databricks' `initialPosition` form `{"at_timestamp": "<time>", "format": "<pattern>"}`, as epoch
 * milliseconds. A time without a zone is UTC.
 */
private[source] object DatabricksTimestamp {
  /** Tried when no format is given, after epoch millis and ISO-8601: the shape of Databricks' documented example. */
  val DefaultPattern = "MM/dd/yyyy HH:mm:ss z"

  def parse(reader: OptionReader, raw: String, root: JsonNode): Long = {
    val extra = root.fieldNames().asScala.filterNot(Set("at_timestamp", "format")).toSeq
    if (extra.nonEmpty) reader.fail(
      KinesisOptions.InitialPosition,
      raw,
      s"""only the fields "at_timestamp" and "format" in the at_timestamp form (not ${extra.mkString(", ")})""")
    val text = root.get("at_timestamp").asText().trim
    Option(root.get("format")).map(_.asText().trim) match {
      case Some(pattern) =>
        withPattern(pattern, text).getOrElse(reader.fail(
          KinesisOptions.InitialPosition,
          raw,
          s"""an "at_timestamp" that the "format" pattern '$pattern' (java.time.format.DateTimeFormatter) parses"""))
      case None =>
        (if (text.matches("\\d+")) Try(text.toLong).toOption else None)
          .orElse(Try(Instant.parse(text).toEpochMilli).toOption)
          .orElse(Try(OffsetDateTime.parse(text).toInstant.toEpochMilli).toOption)
          .orElse(withPattern(DefaultPattern, text))
          .getOrElse(reader.fail(
            KinesisOptions.InitialPosition,
            raw,
            "an \"at_timestamp\" in epoch milliseconds, " +
              s"""ISO-8601 (2025-01-31T12:00:00Z) or $DefaultPattern, or a "format" pattern that parses it"""
          ))
    }
  }

  /**
   * java.time first; then java.text, whose zone letters also read zone names ("PDT" under "ZZZ", as Databricks'
   * example writes it), which java.time reads only under "z".
   */
  private def withPattern(pattern: String, text: String): Option[Long] = {
    val modern = Try(DateTimeFormatter.ofPattern(pattern, Locale.ROOT).parse(text)).toOption.flatMap(toMillis)
    modern.orElse(Try {
      val legacy = new SimpleDateFormat(pattern, Locale.ROOT)
      legacy.setLenient(false)
      legacy.setTimeZone(TimeZone.getTimeZone(ZoneOffset.UTC))
      val at = new ParsePosition(0)
      val date = legacy.parse(text, at)
      if (date == null || at.getIndex != text.length) None else Some(date.getTime)
    }.toOption.flatten)
  }

  private def toMillis(t: TemporalAccessor): Option[Long] =
    if (t.isSupported(ChronoField.INSTANT_SECONDS)) Some(Instant.from(t).toEpochMilli)
    else Try(LocalDateTime.from(t).toInstant(ZoneOffset.UTC).toEpochMilli).toOption
      .orElse(Try(LocalDate.from(t).atStartOfDay(ZoneOffset.UTC).toInstant.toEpochMilli).toOption)
}
