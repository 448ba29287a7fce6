package io.github.sparkkinesis.it

import java.security.MessageDigest
import java.time.Duration

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, hex}
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/**
 * Records that begin with the KPL magic bytes but cannot be split, put by a plain SDK client as any producer's
 * data would be (SPEC §2): each is read once, whole, as it was stored, in every way the source reads; the
 * malformed ones (checksum right, contents wrong) are counted and said once per shard. None stops the query.
 */
class SourceLookAlikeAggregateSuite extends AnyFunSuite with SimulatorSourceTest {
  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.streaming.realTimeMode.minBatchDuration" -> "1000")

  /** A row as compared here: partition key, data in hex, sequence number, sub-sequence number. */
  private type Row4 = (String, String, String, Long)

  private val magic = Array(0xf3, 0x89, 0x9a, 0xc2).map(_.toByte)
  private def varint(v: Long): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    var x = v
    while ((x & ~0x7fL) != 0) { out.write(((x & 0x7f) | 0x80).toInt); x >>>= 7 }
    out.write(x.toInt)
    out.toByteArray
  }
  private def bytesField(n: Int, b: Array[Byte]) = varint((n << 3 | 2).toLong) ++ varint(b.length.toLong) ++ b
  private def numberField(n: Int, v: Long) = varint((n << 3).toLong) ++ varint(v)
  private def userRecord(keyIndex: Option[Long], data: Option[String]): Array[Byte] =
    bytesField(3, keyIndex.map(numberField(1, _)).getOrElse(Array.empty) ++
      data.map(d => bytesField(3, d.getBytes("UTF-8"))).getOrElse(Array.empty))
  private def md5(b: Array[Byte]) = MessageDigest.getInstance("MD5").digest(b)
  private def sealedRight(body: Array[Byte]) = magic ++ body ++ md5(body)
  private def hexOf(b: Array[Byte]) = b.map(x => f"$x%02X").mkString

  /** Puts the cases into a 1-shard stream; returns the rows a read must give, and how many are malformed. */
  private def putLookAlikes(stream: String): (Seq[Row4], Int) = {
    kinesis.createStream(stream, 1)
    val body = bytesField(1, "user-a".getBytes("UTF-8")) ++ bytesField(1, "user-b".getBytes("UTF-8")) ++
      userRecord(Some(0), Some("first")) ++ userRecord(Some(1), Some("second"))
    val aggregate = sealedRight(body)
    val whole = Seq(
      "wrong-digest" -> (magic ++ body ++ new Array[Byte](16)),
      "unparseable" -> sealedRight(Array[Byte](0x0a, 0x7f, 0x01)),
      "only-magic-and-digest" -> sealedRight(Array.empty),
      "magic-and-16-bytes" -> (magic ++ Array.fill[Byte](16)(0x5a)),
      "key-index-outside" -> sealedRight(bytesField(1, "k".getBytes("UTF-8")) ++ userRecord(Some(4), Some("x"))),
      "record-without-data" -> sealedRight(bytesField(1, "k".getBytes("UTF-8")) ++ userRecord(Some(0), None)),
      "plain" -> "plain".getBytes("UTF-8"))
    val malformed = Set("only-magic-and-digest", "key-index-outside", "record-without-data")
    val agg = kinesis.put(stream, "agg", aggregate).sequenceNumber()
    val split = Seq(("user-a", hexOf("first".getBytes("UTF-8")), agg, 0L), ("user-b", hexOf("second".getBytes("UTF-8")), agg, 1L))
    val rest = whole.map { case (name, data) => (name, hexOf(data), kinesis.put(stream, name, data).sequenceNumber(), 0L) }
    (split ++ rest, whole.count { case (name, _) => malformed(name) })
  }

  private def hexed(df: DataFrame): DataFrame = df.withColumn("data", hex(col("data")).cast("binary"))
  private def rows(read: Seq[ReadRecord]): Seq[Row4] =
    read.map(r => (r.partitionKey, r.data, r.sequenceNumber, r.subSequenceNumber))
  private def malformedInProgress(q: org.apache.spark.sql.streaming.StreamingQuery): Long =
    q.recentProgress.map(_.sources.head.metrics.asScala.getOrElse("numMalformedAggregates", "0").toLong).max

  test("polling: AvailableNow and a batch read give each look-alike whole, once; malformed ones counted, said once") {
    val stream = newStreamName("lookalike")
    val (expected, malformed) = putLookAlikes(stream)
    val log = LogCapture.install()
    try {
      val collector = new Collector
      val query = collector.start(hexed(kinesisReader(stream, "initialPosition" -> "trim_horizon")), newCheckpoint(),
        Trigger.AvailableNow())
      assert(query.awaitTermination(Duration.ofMinutes(2).toMillis))
      query.exception.foreach(e => throw e)
      assert(rows(collector.records) == expected)
      assert(malformedInProgress(query) == malformed)

      val batch = spark.read.format("kinesis").options(Map(
        "streamName" -> stream,
        "endpoint" -> endpoint.toString,
        "region" -> TestEnv.region,
        "awsAccessKey" -> TestEnv.accessKey,
        "awsSecretKey" -> TestEnv.secretKey,
        "initialPosition" -> "trim_horizon")).load()
      val scan = hexed(batch)
      val got = scan.collect().map(r =>
        (r.getAs[String]("partitionKey"), new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
          r.getAs[String]("sequenceNumber"), r.getAs[Long]("subSequenceNumber")))
      assert(got.toSeq == expected)
      val ui = scan.queryExecution.executedPlan.collectLeaves().flatMap(_.metrics).toMap
      assert(ui("kinesisMalformedAggregates").value == malformed, "the SQL tab's count")
    } finally log.uninstall()
    val said = log.text.linesIterator.filter(_.contains("is a KPL aggregate whose checksum matches")).toSeq
    assert(said.size == 1, s"once per shard and JVM: ${said.mkString("\n")}")
    assert(said.head.startsWith("WARN") && said.head.contains(s"$stream/shardId-000000000000") &&
      said.head.contains("(it holds no user record)"))
  }

  test("enhanced fan-out, AvailableNow: the same rows and count") {
    val stream = newStreamName("lookalike-efo")
    val (expected, malformed) = putLookAlikes(stream)
    val collector = new Collector
    val query = collector.start(
      hexed(kinesisReader(stream, "initialPosition" -> "trim_horizon", "consumerMode" -> "efo")),
      newCheckpoint(),
      Trigger.AvailableNow())
    assert(query.awaitTermination(Duration.ofMinutes(2).toMillis))
    query.exception.foreach(e => throw e)
    assert(rows(collector.records) == expected)
    assert(malformedInProgress(query) == malformed)
  }

  for (mode <- Seq("polling", "efo")) {
    test(s"real-time mode, $mode: the same rows, inside the batch") {
      val stream = newStreamName(s"lookalike-rtm-$mode")
      val (expected, _) = putLookAlikes(stream)
      val sink = RealTimeSink.create()
      val query = hexed(kinesisReader(stream, "initialPosition" -> "trim_horizon", "consumerMode" -> mode))
        .writeStream.option("checkpointLocation", newCheckpoint()).outputMode("update")
        .trigger(Trigger.RealTime("30 seconds")).foreach(sink.writer).start()
      try {
        eventually("every row", Duration.ofSeconds(60)) { sink.records.size >= expected.size || query.exception.nonEmpty }
        query.exception.foreach(e => throw e)
        assert(rows(sink.records) == expected)
      } finally query.stop()
    }
  }
}
