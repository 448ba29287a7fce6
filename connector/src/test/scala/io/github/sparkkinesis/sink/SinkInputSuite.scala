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

  test("streamARN alone names the sink's stream, written to by name; several ARNs are refused naming streamARN") {
    val arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/clicks"
    assert(SinkConfig(OptionReader(Map("streamARN" -> arn))).streamName.contains("clicks"))
    assert(SinkConfig(OptionReader(Map("streamName" -> "clicks", "streamARN" -> arn))).streamName.contains("clicks"))
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

  test("explicit hash keys: decimal integers in 0..2^128-1") {
    import KinesisDataWriter.validHashKey
    assert(validHashKey("0") && validHashKey("340282366920938463463374607431768211455"))
    assert(!validHashKey("340282366920938463463374607431768211456"), "2^128 is one too many")
    assert(!validHashKey("") && !validHashKey("-1") && !validHashKey("12a") && !validHashKey("1" * 40))
  }

  test("messages show at most 40 characters of a key") {
    val key = "k" * 257
    val m = SinkErrors.keyLength("s", key, 257).getMessage
    assert(m.contains("k" * 40 + "...' (257 characters)") && !m.contains("k" * 41), m)
    assert(m.contains("1 to 256"))
  }
}
