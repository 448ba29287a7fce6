package io.github.sparkkinesis.simulator

import java.util.Base64

import com.fasterxml.jackson.databind.JsonNode

import scala.jdk.CollectionConverters._

/**
 * Typed access to a decoded request. The two wire formats differ in blobs (CBOR byte strings, base64 text in JSON)
 * and timestamps (epoch milliseconds under CBOR tag 1 from the Java SDK, epoch seconds in JSON), so those readers
 * know which format the request came in.
 */
final class Req(val node: JsonNode, val cbor: Boolean) {
  private def field(name: String): Option[JsonNode] = Option(node.get(name)).filterNot(_.isNull)

  def has(name: String): Boolean = field(name).isDefined

  def str(name: String): String = optStr(name).getOrElse(throw KinesisError.validation(
    s"1 validation error detected: Value null at '${lowerFirst(name)}' failed to satisfy constraint: Member must not be null"))

  def optStr(name: String): Option[String] = field(name).map(_.asText())

  def optInt(name: String): Option[Int] = field(name).map { n =>
    if (!n.canConvertToInt) throw KinesisError.validation(s"$name must be an integer")
    n.asInt()
  }

  def optBool(name: String): Option[Boolean] = field(name).map(_.asBoolean())

  def obj(name: String): Option[Req] = field(name).map(new Req(_, cbor))

  def list(name: String): Seq[Req] = field(name).map(_.elements().asScala.map(new Req(_, cbor)).toSeq).getOrElse(Nil)

  def blob(name: String): Array[Byte] = field(name) match {
    case None => throw KinesisError.validation(
      s"1 validation error detected: Value null at '${lowerFirst(name)}' failed to satisfy constraint: Member must not be null")
    case Some(n) if n.isBinary => n.binaryValue()
    case Some(n) =>
      try Base64.getDecoder.decode(n.asText())
      catch { case _: IllegalArgumentException => throw KinesisError.validation(s"$name is not valid base64") }
  }

  def optTimestampMillis(name: String): Option[Long] = field(name).map { n =>
    if (n.isNumber) { if (cbor && n.isIntegralNumber) n.asLong() else math.round(n.asDouble() * 1000) }
    else try java.time.Instant.parse(n.asText()).toEpochMilli
    catch { case _: java.time.format.DateTimeParseException => throw KinesisError.validation(s"$name is not a timestamp") }
  }

  private def lowerFirst(s: String): String = s.head.toLower +: s.tail
}
