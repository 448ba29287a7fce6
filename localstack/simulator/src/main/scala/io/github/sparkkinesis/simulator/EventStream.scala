package io.github.sparkkinesis.simulator

import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.CRC32

/**
 * The `application/vnd.amazon.eventstream` framing SubscribeToShard answers with: each message is a prelude (total
 * length, headers length, the prelude's CRC32), string headers (`:message-type`, `:event-type` or
 * `:exception-type`, `:content-type`), the payload, and a CRC32 of everything before it.
 */
object EventStream {
  val ContentType = "application/vnd.amazon.eventstream"
  private val StringHeader: Byte = 7

  def event(eventType: String, contentType: String, payload: Array[Byte]): Array[Byte] =
    message(Seq(":message-type" -> "event", ":event-type" -> eventType, ":content-type" -> contentType), payload)

  def exception(error: KinesisError, contentType: String, payload: Array[Byte]): Array[Byte] =
    message(Seq(":message-type" -> "exception", ":exception-type" -> error.errorType, ":content-type" -> contentType),
      payload)

  def message(headers: Seq[(String, String)], payload: Array[Byte]): Array[Byte] = {
    val h = new ByteArrayOutputStream()
    headers.foreach { case (name, value) =>
      val n = name.getBytes(UTF_8)
      val v = value.getBytes(UTF_8)
      h.write(n.length)
      h.write(n)
      h.write(StringHeader)
      h.write(v.length >>> 8)
      h.write(v.length & 0xff)
      h.write(v)
    }
    val headerBytes = h.toByteArray
    val total = 12 + headerBytes.length + payload.length + 4
    val out = ByteBuffer.allocate(total)
    out.putInt(total).putInt(headerBytes.length)
    out.putInt(crc(out.array(), 8))
    out.put(headerBytes).put(payload)
    out.putInt(crc(out.array(), total - 4))
    out.array()
  }

  private def crc(bytes: Array[Byte], length: Int): Int = {
    val c = new CRC32
    c.update(bytes, 0, length)
    c.getValue.toInt
  }
}
