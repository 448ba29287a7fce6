package io.github.sparkkinesis.sink

import io.github.sparkkinesis.options.{KinesisOptionException, OptionReader}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.sink.executor.KinesisDataWriter

/** Input columns and sink options are checked before anything is sent (SPEC §3, §5). */
class SinkInputSuite extends AnyFunSuite {
  private def schema(fields: (String, DataType)*) = StructType(fields.map { case (n, t) => StructField(n, t) })

  private def schemaError(s: StructType, streamNameSet: Boolean = true): String =
    intercept[KinesisSinkSchemaException](SinkColumns.of(s, streamNameSet)).getMessage

  test("data as binary or string, partitionKey, optional explicitHashKey; other columns are ignored") {
    val c = SinkColumns.of(schema("shardId" -> StringType, "partitionKey" -> StringType, "data" -> BinaryType), true)
    assert(c == SinkColumns(data = 2, dataIsBinary = true, partitionKey = 1, explicitHashKey = None, stream = None))
    val s =
      SinkColumns.of(schema("DATA" -> StringType, "PartitionKey" -> StringType, "explicitHashKey" -> StringType), true)
    assert(!s.dataIsBinary && s.explicitHashKey.contains(2), "names match case-insensitively")
  }

  test("the source's schema is accepted as sink input unchanged") {
    val c = SinkColumns.of(io.github.sparkkinesis.KinesisSchema.schema, streamNameSet = false)
    assert(c.stream.contains(2) && c.dataIsBinary)
  }

  test("a missing column names the column and its expected type") {
    val m = schemaError(schema("partitionKey" -> StringType, "value" -> StringType))
    assert(m.contains("no 'data' column") && m.contains("binary or string") && m.contains("value string"), m)
    val k = schemaError(schema("data" -> StringType))
    assert(k.contains("'partitionKey'") && k.contains("type string"), k)
  }

  test("a wrong type names the column, its type and the expected one") {
    val m = schemaError(schema("data" -> IntegerType, "partitionKey" -> StringType))
    assert(m.contains("column 'data' has type int; expected binary or string"), m)
    val k = schemaError(schema("data" -> StringType, "partitionKey" -> LongType))
    assert(k.contains("column 'partitionKey' has type bigint; expected string"), k)
    val h = schemaError(schema("data" -> StringType, "partitionKey" -> StringType, "explicitHashKey" -> LongType))
    assert(h.contains("'explicitHashKey'") && h.contains("decimal 128-bit"), h)
  }

  test("without streamName the rows need a string 'stream' column; with it the column is ignored") {
    val m = schemaError(schema("data" -> StringType, "partitionKey" -> StringType), streamNameSet = false)
    assert(m.contains("streamName") && m.contains("'stream' column"), m)
    val t = schemaError(schema("data" -> StringType, "partitionKey" -> StringType, "stream" -> IntegerType), false)
    assert(t.contains("column 'stream' has type int; expected string"), t)
    val ignored =
      SinkColumns.of(schema("data" -> StringType, "partitionKey" -> StringType, "stream" -> IntegerType), true)
    assert(ignored.stream.isEmpty)
  }

  test("under aws-kinesis the per-row stream comes from a 'streamName' column, as its source's rows carry it") {
    val aws = io.github.sparkkinesis.RowLayout.AwsKinesis
    val c = SinkColumns.of(aws.schema, streamNameSet = false, aws.streamColumn)
    assert(c == SinkColumns(
      data = 0,
      dataIsBinary = true,
      partitionKey = 2,
      explicitHashKey = None,
      stream = Some(1),
      streamColumn = "streamName"))
    val m = intercept[KinesisSinkSchemaException](SinkColumns.of(
      schema("data" -> StringType, "partitionKey" -> StringType, "stream" -> StringType),
      false,
      "streamName")).getMessage
    assert(m.contains("give the input a 'streamName' column") && m.contains("a stream name or ARN"), m)
  }

  test("streamARN names the sink's stream, written to by ARN; several ARNs are refused naming streamARN") {
    val arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks"
    assert(SinkConfig(OptionReader(Map("streamARN" -> arn))).streamName.contains(arn))
    assert(SinkConfig(OptionReader(Map("streamName" -> "clicks", "streamARN" -> arn))).streamName.contains(arn))
    assert(SinkConfig(OptionReader(Map("streamName" -> "clicks"))).streamName.contains("clicks"))
    val m = intercept[KinesisOptionException](SinkConfig(OptionReader(Map("streamARN" -> s"$arn,${arn}2")))).getMessage
    assert(m.contains("'streamARN'") && m.contains("expected one stream ARN"), m)
  }

  test("sink options: defaults, values and failures naming option, value and what is accepted") {
    val d = SinkConfig(OptionReader(Map("streamName" -> "s")))
    assert(d.streamName.contains("s") && d.maxRecordsPerRequest == 500 && d.maxBytesPerRequest == 10L * 1024 * 1024)
    assert(d.maxInFlightRequests == 4 && !d.preserveKeyOrder && !d.clusterByPartitionKey)
    assert(d.flowControl == FlowControlMode.Adaptive)
    val set = SinkConfig(OptionReader(Map(
      "streamname" -> "s",
      "maxBytesPerRequest" -> "5m",
      "flowControl" -> "AIMD",
      "preserveKeyOrder" -> "true",
      "maxInFlightRequests" -> "1")))
    assert(set.maxBytesPerRequest == 5L * 1024 * 1024 && set.flowControl == FlowControlMode.Aimd)
    assert(set.preserveKeyOrder && set.maxInFlightRequests == 1)
    assert(SinkConfig(OptionReader(Map.empty[String, String])).streamName.isEmpty)

    def error(options: (String, String)*) =
      intercept[KinesisOptionException](SinkConfig(OptionReader(options.toMap))).getMessage
    assert(error("streamName" -> "a,b").contains("one stream name"))
    assert(error("streamName" -> "s", "maxRecordsPerRequest" -> "501").contains("1..500"))
    assert(error("streamName" -> "s", "maxBytesPerRequest" -> "11m").contains("'maxBytesPerRequest'"))
    assert(error("streamName" -> "s", "maxInFlightRequests" -> "0").contains("1..64"))
    assert(error("streamName" -> "s", "flowControl" -> "fast").contains("one of adaptive, ladder, aimd, off"))
    assert(error("streamName" -> "s", "preserveKeyOrdr" -> "true").contains("did you mean 'preserveKeyOrder'"))
  }

  test("aggregation options: off by default, kpl with defaults or limits, each bad value named with its limit") {
    assert(SinkConfig(OptionReader(Map("streamName" -> "s"))).aggregation.isEmpty)
    assert(SinkConfig(OptionReader(Map("streamName" -> "s", "aggregation" -> "KPL"))).aggregation.contains(
      AggregationConfig(50L * 1024, 10000, 100)))
    assert(SinkConfig(OptionReader(Map(
      "streamName" -> "s",
      "aggregation" -> "kpl",
      "aggregationMaxBytes" -> "256k",
      "aggregationMaxRecords" -> "50",
      "aggregationLingerMs" -> "20"))).aggregation.contains(
      AggregationConfig(256L * 1024, 50, 20)))
    assert(
      SinkConfig(OptionReader(Map("streamName" -> "s", "aggregation" -> "kpl", "maxBytesPerRequest" -> "2k")))
        .aggregation.get.maxBytes == 2048,
      "the default never exceeds a request"
    )

    def error(options: (String, String)*) =
      intercept[KinesisOptionException](SinkConfig(OptionReader((options :+ ("streamName" -> "s")).toMap))).getMessage
    assert(error("aggregation" -> "zip") ==
      "Invalid value 'zip' for option 'aggregation': expected one of none, kpl.")
    assert(error("aggregation" -> "kpl", "aggregationMaxBytes" -> "100") ==
      "Invalid value '100' for option 'aggregationMaxBytes': expected a size such as 1048576, 512k or 10m, " +
      "between 1024 and 10485760 bytes.")
    assert(error("aggregation" -> "kpl", "aggregationMaxBytes" -> "2m", "maxBytesPerRequest" -> "1m") ==
      "Invalid value '2m' for option 'aggregationMaxBytes': expected at most maxBytesPerRequest (1048576 bytes): " +
      "an aggregate travels in one request.")
    assert(error("aggregation" -> "kpl", "aggregationMaxRecords" -> "0").contains(
      "'aggregationMaxRecords': expected an integer in 1..1000000"))
    assert(error("aggregation" -> "kpl", "aggregationLingerMs" -> "soon").contains(
      "'aggregationLingerMs': expected an integer in 1..60000"))
    assert(error("aggregationLingerMs" -> "5") ==
      "Option 'aggregationLingerMs' only applies with 'aggregation' set to 'kpl': set aggregation=kpl or remove it.")
  }

  test("explicit hash keys: decimal integers in 0..2^128-1, written without a leading zero as PutRecords requires") {
    import KinesisDataWriter.validHashKey
    assert(validHashKey("0") && validHashKey("340282366920938463463374607431768211455"))
    assert(!validHashKey("340282366920938463463374607431768211456"), "2^128 is one too many")
    assert(!validHashKey("") && !validHashKey("-1") && !validHashKey("12a") && !validHashKey("1" * 40))
    assert(!validHashKey("007") && !validHashKey("00") && !validHashKey("+1") && !validHashKey(" 1"))
    assert(validHashKey("10") && validHashKey("1" + "0" * 38))
  }

  test("messages show at most 40 characters of a key") {
    val key = "k" * 257
    val m = SinkErrors.keyLength("s", key, 257, "row 1 of this task").getMessage
    assert(m.contains("k" * 40 + "...' (257 characters)") && !m.contains("k" * 41), m)
    assert(m.contains("1 to 256"))
  }

  test("a rejected row is named by its position in the task; the message says nothing of it was sent") {
    assert(SinkInput.position(17, Some(3)) == "row 17 of this task (partition 3)")
    assert(SinkInput.position(1, None) == "row 1 of this task")
    val m = SinkErrors.nullData("s", "k", SinkInput.position(5, Some(0))).getMessage
    assert(
      m == "Kinesis sink: cannot write row 5 of this task (partition 0) to stream 's': data is null for " +
        "partitionKey 'k'. Nothing of that row was sent; the rows the task took before it were delivered.",
      m
    )
  }

  test("partition keys: well-formed UTF-8 passes; stray bytes and encoded lone surrogates are named with their offset") {
    def bytes(hex: String) = hex.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
    assert(SinkInput.malformedUtf8("plain".getBytes("UTF-8")).isEmpty)
    assert(SinkInput.malformedUtf8("ümlaut ✓ 😀 \uFFFD".getBytes("UTF-8")).isEmpty, "a real U+FFFD is text too")
    assert(SinkInput.malformedUtf8(Array.emptyByteArray).isEmpty)
    // "k" then U+D800 as a CESU-8 / Modified UTF-8 writer encodes a lone high surrogate.
    assert(SinkInput.malformedUtf8(bytes("6BEDA080")).contains("an encoded lone surrogate (invalid UTF-16) at byte 1 (ED A0 80)"))
    assert(SinkInput.malformedUtf8(bytes("6B6BFF")).contains("bytes that are not UTF-8 at byte 2 (FF)"))
    assert(SinkInput.malformedUtf8(bytes("C3")).exists(_.startsWith("bytes that are not UTF-8 at byte 0")), "cut short")
    val m =
      SinkErrors.keyNotUtf8("s", "k\uFFFD", "bytes that are not UTF-8 at byte 1 (FF)", "row 2 of this task").getMessage
    assert(
      m.contains("partitionKey 'k\uFFFD' is not valid UTF-8") && m.contains("Kinesis would store a different key"),
      m)
  }

  test("a stream column value must be a stream name or an ARN; the problem says which rule it breaks") {
    assert(SinkInput.badStreamName("orders_v2.eu-1").isEmpty && SinkInput.badStreamName("s" * 128).isEmpty)
    assert(SinkInput.badStreamName("").contains("it is empty"))
    assert(SinkInput.badStreamName("s" * 129).exists(_.contains("129 characters")))
    assert(SinkInput.badStreamName("orders/eu").exists(_.contains("neither a stream name")))
    assert(SinkInput.badStreamName("arn:aws:kinesis:eu-west-1:1:stream/x").exists(_.contains("nor a stream ARN")))
    val m = SinkErrors.badStream("stream", "orders/eu", "it is neither", "row 9 of this task").getMessage
    assert(m.contains("cannot write row 9 of this task to stream 'orders/eu': the 'stream' column's value"), m)
  }

  test("a stream column naming a missing stream: the row, the column and the not-found message") {
    val notFound = SinkErrors.streamNotFound(
      "gone",
      io.github.sparkkinesis.client.ConnectionConfig.default
        .copy(region = Some("eu-west-1")))
    assert(notFound.isInstanceOf[KinesisSinkStreamNotFoundException])
    val m = SinkErrors.streamMissing("stream", "gone", notFound.getMessage, "row 4 of this task").getMessage
    assert(
      m.contains("cannot write row 4 of this task to stream 'gone': the 'stream' column names a stream " +
        "that does not exist (Kinesis stream 'gone' not found in region eu-west-1"),
      m
    )
  }
}
