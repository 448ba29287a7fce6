package io.github.sparkkinesis.simulator

import java.io.ByteArrayOutputStream

import com.fasterxml.jackson.core.{JsonFactory, JsonGenerator}
import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.dataformat.cbor.{CBORFactory, CBORGenerator}

/**
 * The two encodings Kinesis speaks. JSON 1.1 is what boto3 and most SDKs send; CBOR 1.1 is the AWS SDK for Java
 * v2's default for Kinesis. They differ only in blobs (base64 text vs. byte strings) and timestamps (epoch seconds
 * as a number vs. CBOR tag 1 with epoch milliseconds, which is what the Java SDK writes and reads).
 */
sealed abstract class WireFormat(val contentType: String, factory: JsonFactory) {
  private val mapper = new ObjectMapper(factory)

  def isCbor: Boolean

  def read(body: Array[Byte]): Req = {
    val node = if (body.isEmpty) mapper.createObjectNode() else mapper.readTree(body)
    if (node == null || !node.isObject) throw KinesisError("SerializationException", "Request body is not an object")
    new Req(node, isCbor)
  }

  def write(out: Out): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(256)
    val gen = factory.createGenerator(bytes)
    try writeValue(gen, out) finally gen.close()
    bytes.toByteArray
  }

  def error(e: KinesisError): Array[Byte] =
    write(Out.obj("__type" -> Out.Str(e.errorType), "message" -> Out.Str(e.message)))

  protected def writeTimestamp(gen: JsonGenerator, millis: Long): Unit

  private def writeValue(gen: JsonGenerator, out: Out): Unit = out match {
    case Out.Obj(fields) =>
      gen.writeStartObject()
      fields.foreach { case (k, v) => gen.writeFieldName(k); writeValue(gen, v) }
      gen.writeEndObject()
    case Out.Arr(items) =>
      gen.writeStartArray()
      items.foreach(writeValue(gen, _))
      gen.writeEndArray()
    case Out.Str(s) => gen.writeString(s)
    case Out.Num(n) => gen.writeNumber(n)
    case Out.Bool(b) => gen.writeBoolean(b)
    case Out.Blob(b) => gen.writeBinary(b)
    case Out.Timestamp(ms) => writeTimestamp(gen, ms)
    case Out.Records(records) =>
      gen.writeStartArray()
      records.foreach { r =>
        gen.writeStartObject()
        gen.writeFieldName("SequenceNumber")
        gen.writeUTF8String(r.sequenceNumberBytes, 0, r.sequenceNumberBytes.length)
        gen.writeFieldName("ApproximateArrivalTimestamp")
        writeTimestamp(gen, r.arrivalMillis)
        gen.writeBinaryField("Data", r.data)
        gen.writeStringField("PartitionKey", r.partitionKey)
        gen.writeEndObject()
      }
      gen.writeEndArray()
    case Out.PutResults(results) =>
      gen.writeStartArray()
      results.foreach { r =>
        gen.writeStartObject()
        r match {
          case Out.Accepted(shardId, record) =>
            gen.writeFieldName("SequenceNumber")
            gen.writeUTF8String(record.sequenceNumberBytes, 0, record.sequenceNumberBytes.length)
            gen.writeStringField("ShardId", shardId)
          case Out.Failed(code, message) =>
            gen.writeStringField("ErrorCode", code)
            gen.writeStringField("ErrorMessage", message)
        }
        gen.writeEndObject()
      }
      gen.writeEndArray()
  }
}

object WireFormat {
  object Json extends WireFormat("application/x-amz-json-1.1", new JsonFactory) {
    val isCbor = false
    protected def writeTimestamp(gen: JsonGenerator, millis: Long): Unit =
      gen.writeNumber(java.math.BigDecimal.valueOf(millis, 3))
  }

  object Cbor extends WireFormat("application/x-amz-cbor-1.1", new CBORFactory) {
    val isCbor = true
    protected def writeTimestamp(gen: JsonGenerator, millis: Long): Unit = {
      gen.asInstanceOf[CBORGenerator].writeTag(1)
      gen.writeNumber(millis)
    }
  }

  def forContentType(contentType: String): WireFormat =
    if (contentType != null && contentType.contains("cbor")) Cbor else Json
}
