package io.github.sparkkinesis.it

import java.sql.Timestamp
import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, ForeachWriter, Row}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.DescribeStreamSummaryRequest

/**
 * `format("aws-kinesis")`, the AWS Labs connector's format name: its five columns on every read path (streaming,
 * batch, real-time), its input columns on the sink; and the stream column holding what the user gave (the ARN with
 * `streamARN` alone, else the name), which the sink takes back.
 */
class AwsKinesisFormatSuite extends AnyFunSuite with SimulatorSourceTest {

  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.streaming.realTimeMode.minBatchDuration" -> "1000")

  private val awsColumns = Seq("data" -> BinaryType, "streamName" -> StringType, "partitionKey" -> StringType,
    "sequenceNumber" -> StringType, "approximateArrivalTimestamp" -> TimestampType)

  private def connection: Map[String, String] = Map(
    "endpoint" -> endpoint.toString, "region" -> TestEnv.region,
    "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey)

  private def arnOf(stream: String): String =
    kinesis.control.describeStreamSummary((b: DescribeStreamSummaryRequest.Builder) => b.streamName(stream))
      .streamDescriptionSummary().streamARN()

  private def streamRead(format: String, options: (String, String)*): DataFrame =
    spark.readStream.format(format).options(connection ++ options + ("initialPosition" -> "trim_horizon")).load()

  private def batchRead(format: String, options: (String, String)*): DataFrame =
    spark.read.format(format).options(connection ++ options + ("initialPosition" -> "trim_horizon")).load()

  /** Every row a streaming query returns, run with Trigger.AvailableNow until it stops. */
  private def collectStreaming(df: DataFrame): Seq[Row] = {
    val rows = new ConcurrentLinkedQueue[Row]()
    val query = df.writeStream.option("checkpointLocation", newCheckpoint()).trigger(Trigger.AvailableNow())
      .foreachBatch { (batch: DataFrame, _: Long) => batch.collect().foreach(rows.add) }.start()
    assert(query.awaitTermination(Duration.ofMinutes(2).toMillis), "AvailableNow query did not stop within 2 minutes")
    query.exception.foreach(e => throw e)
    rows.asScala.toSeq
  }

  private def schemaOf(df: DataFrame): Seq[(String, DataType)] = df.schema.fields.map(f => f.name -> f.dataType).toSeq

  /** The five columns of each row, compared with what was put into a one-shard stream (so in put order). */
  private def assertAwsRows(rows: Seq[Row], put: Seq[PutRecordResult], stream: String, streamColumn: String): Unit = {
    val sorted = rows.sortBy(r => BigInt(r.getString(3)))
    assert(sorted.map(r => (new String(r.getAs[Array[Byte]](0), "UTF-8"), r.getString(1), r.getString(2), r.getString(3))) ==
      put.map(p => (p.data, streamColumn, p.partitionKey, p.sequenceNumber)))
    val arrivals = kinesis.arrivalMillis(stream, put.head.shardId)
    assert(sorted.map(_.getAs[Timestamp](4).getTime) == arrivals)
  }

  test("a streaming read with format aws-kinesis has the AWS Labs columns, in order, with the records' values") {
    val stream = newStreamName("aws-stream")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, (1 to 12).map(i => (s"key-${i % 3}", s"event-$i")))
    val df = streamRead("aws-kinesis", "streamName" -> stream)
    assert(schemaOf(df) == awsColumns)
    val rows = collectStreaming(df.selectExpr("*"))
    assert(rows.forall(_.length == 5))
    assertAwsRows(rows, put, stream, stream)
    // A job written for the AWS Labs connector selects by its column names.
    val selected = collectStreaming(streamRead("aws-kinesis", "streamName" -> stream)
      .selectExpr("CAST(data AS STRING) AS data", "streamName"))
    assert(selected.map(r => (r.getString(0), r.getString(1))).sorted == put.map(p => (p.data, stream)).sorted)
  }

  test("a batch read with format aws-kinesis has the same columns; streamARN alone puts the ARN in streamName") {
    val stream = newStreamName("aws-batch")
    kinesis.createStream(stream, 1)
    val arn = arnOf(stream)
    val put = kinesis.putAll(stream, (1 to 10).map(i => (s"k$i", s"batch-$i")))
    val byName = batchRead("aws-kinesis", "streamName" -> stream)
    assert(schemaOf(byName) == awsColumns)
    assertAwsRows(byName.collect().toSeq, put, stream, stream)
    assertAwsRows(batchRead("aws-kinesis", "streamARN" -> arn).collect().toSeq, put, stream, arn)
    assertAwsRows(batchRead("aws-kinesis", "streamName" -> stream, "streamARN" -> arn).collect().toSeq, put, stream, stream)
  }

  test("format kinesis keeps its seven columns; its stream column holds the ARN with streamARN, the name with streamName") {
    val stream = newStreamName("stream-col")
    kinesis.createStream(stream, 2)
    val arn = arnOf(stream)
    val put = kinesis.putAll(stream, (1 to 10).map(i => (s"k$i", s"v-$i")))
    val ours = streamRead("kinesis", "streamARN" -> arn)
    assert(schemaOf(ours).map(_._1) == Seq("partitionKey", "data", "stream", "shardId", "sequenceNumber",
      "approximateArrivalTimestamp", "subSequenceNumber"))
    val byArn = collectStreaming(ours)
    assert(byArn.map(_.getAs[String]("sequenceNumber")).sorted == put.map(_.sequenceNumber).sorted)
    assert(byArn.map(_.getAs[String]("stream")).toSet == Set(arn))
    val byName = batchRead("kinesis", "streamName" -> stream).collect().toSeq
    assert(byName.map(_.getAs[String]("sequenceNumber")).sorted == put.map(_.sequenceNumber).sorted)
    assert(byName.map(_.getAs[String]("stream")).toSet == Set(stream))
    assert(batchRead("kinesis", "streamARN" -> arn).collect().map(_.getAs[String]("stream")).toSet == Set(arn))
  }

  test("real-time mode with aws-kinesis: the five columns, streamName holding the ARN given") {
    val stream = newStreamName("aws-rtm")
    kinesis.createStream(stream, 1)
    val arn = arnOf(stream)
    val put = kinesis.putAll(stream, (1 to 8).map(i => (s"k$i", s"rt-$i")))
    val sink = AwsRowsSink.create()
    val query = streamRead("aws-kinesis", "streamARN" -> arn).writeStream
      .option("checkpointLocation", newCheckpoint()).outputMode("update")
      .trigger(Trigger.RealTime("30 seconds")).foreach(sink.writer).start()
    try {
      eventually("every record, inside the batch", Duration.ofSeconds(60)) { sink.rows.size >= put.size }
      assert(sink.rows.map(r => (r.data, r.streamName, r.partitionKey, r.sequenceNumber)).sortBy(r => BigInt(r._4)) ==
        put.map(p => (p.data, arn, p.partitionKey, p.sequenceNumber)))
      assert(sink.rows.map(_.arrivalMillis).sorted == kinesis.arrivalMillis(stream, put.head.shardId).sorted)
    } finally query.stop()
  }

  test("a write with format aws-kinesis: data and partitionKey, the stream from a streamName column or the option") {
    val a = newStreamName("aws-sink-a")
    val b = newStreamName("aws-sink-b")
    Seq(a, b).foreach(kinesis.createStream(_, 1))
    val routed = spark.range(0, 20).select(
      format_string("routed-%02d", col("id")).as("data"),
      concat(lit("user-"), (col("id") % 4).cast("string")).as("partitionKey"),
      when(col("id") % 2 === 0, lit(a)).otherwise(lit(arnOf(b))).as("streamName"))
    routed.write.format("aws-kinesis").options(connection).mode("append").save()
    def payloads(stream: String) = batchRead("kinesis", "streamName" -> stream)
      .selectExpr("CAST(data AS STRING)").collect().map(_.getString(0)).sorted.toSeq
    assert(payloads(a) == (0 until 20 by 2).map(i => f"routed-$i%02d"), "rows routed by the stream's name")
    assert(payloads(b) == (1 until 20 by 2).map(i => f"routed-$i%02d"), "rows routed by the stream's ARN")

    // Binary data, the stream given as an option (the AWS Labs README's sink names it so, with its key prefix).
    val binary = spark.range(0, 5).select(
      format_string("opt-%d", col("id")).cast("binary").as("data"), lit("k").as("partitionKey"))
    binary.write.format("aws-kinesis").options(connection + ("streamName" -> a)).mode("append").save()
    assert(payloads(a).count(_.startsWith("opt-")) == 5)

    // Our column name is not the AWS Labs one: the error names the column to give.
    val ours = spark.range(0, 1).select(lit("x").as("data"), lit("k").as("partitionKey"), lit(a).as("stream"))
    val e = intercept[Exception](ours.write.format("aws-kinesis").options(connection).mode("append").save())
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
      .exists(_.getMessage.contains("give the input a 'streamName' column")), e.toString)
  }

  test("read then written back with no stream option: a stream column holding an ARN routes to that stream") {
    val from = newStreamName("arn-from")
    val to = newStreamName("arn-to")
    Seq(from, to).foreach(kinesis.createStream(_, 2))
    val (fromArn, toArn) = (arnOf(from), arnOf(to))
    val put = kinesis.putAll(from, (1 to 30).map(i => (s"k${i % 7}", s"copy-$i")))

    // Written back unchanged: each record goes again to the stream it was read from, named by its ARN.
    val read = batchRead("kinesis", "streamARN" -> fromArn)
    read.write.format("kinesis").options(connection).mode("append").save()
    val twice = batchRead("kinesis", "streamName" -> from).selectExpr("CAST(data AS STRING)").collect().map(_.getString(0))
    assert(twice.sorted.toSeq == (put ++ put).map(_.data).sorted)

    // The same with the AWS Labs columns, the ARN rewritten to another stream's.
    batchRead("aws-kinesis", "streamARN" -> fromArn).where(col("data").cast("string").startsWith("copy-1"))
      .withColumn("streamName", regexp_replace(col("streamName"), s"/$from$$", s"/$to"))
      .write.format("aws-kinesis").options(connection).mode("append").save()
    val copied = batchRead("aws-kinesis", "streamARN" -> toArn).collect().toSeq
    val expected = put.filter(_.data.startsWith("copy-1"))
    assert(copied.map(r => (r.getString(2), new String(r.getAs[Array[Byte]](0), "UTF-8"))).sorted ==
      (expected ++ expected).map(p => (p.partitionKey, p.data)).sorted)
    assert(copied.map(_.getString(1)).toSet == Set(toArn))
  }
}

/** What a real-time aws-kinesis test sees of a row. */
final case class AwsRow(data: String, streamName: String, partitionKey: String, sequenceNumber: String, arrivalMillis: Long)

/** Collects a real-time query's rows by their AWS Labs column names, across the driver and executors of one JVM. */
final class AwsRowsSink private (id: String) {
  def writer: ForeachWriter[Row] = new AwsRowsSink.Writer(id)
  def rows: Seq[AwsRow] = AwsRowsSink.rows(id).asScala.toSeq
}

object AwsRowsSink {
  private val byId = new java.util.concurrent.ConcurrentHashMap[String, ConcurrentLinkedQueue[AwsRow]]()

  def create(): AwsRowsSink = new AwsRowsSink(java.util.UUID.randomUUID().toString)

  private def rows(id: String) = byId.computeIfAbsent(id, _ => new ConcurrentLinkedQueue[AwsRow]())

  private final class Writer(id: String) extends ForeachWriter[Row] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(r: Row): Unit = rows(id).add(AwsRow(new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
      r.getAs[String]("streamName"), r.getAs[String]("partitionKey"), r.getAs[String]("sequenceNumber"),
      r.getAs[Timestamp]("approximateArrivalTimestamp").getTime))
    override def close(errorOrNull: Throwable): Unit = ()
  }
}
