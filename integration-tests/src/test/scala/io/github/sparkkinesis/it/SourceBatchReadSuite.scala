package io.github.sparkkinesis.it

import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.FetchPlanner

/** `spark.read.format("kinesis")`: a bounded range, from initialPosition to the tip seen when the read is planned. */
class SourceBatchReadSuite extends AnyFunSuite with SourceTest {

  private def batchReader(stream: String, options: (String, String)*): DataFrame =
    spark.read.format("kinesis").options(Map(
      "streamName" -> stream, "endpoint" -> emulator.endpoint.toString, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey) ++ options).load()

  private def collect(df: DataFrame): Seq[ReadRecord] = df.collect().toSeq.map { r =>
    ReadRecord(0, r.getAs[String]("partitionKey"), new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
      r.getAs[String]("shardId"), r.getAs[String]("sequenceNumber"), r.getAs[Long]("subSequenceNumber"))
  }

  test("a batch read from trim_horizon returns every record, across a split, children after their parent") {
    val stream = newStreamName("batch")
    kinesis.createStream(stream, 2)
    val parent = kinesis.shardIds(stream).sorted.head
    val before = kinesis.putAll(stream, (1 to 30).map(i => (s"key-${i % 6}", f"before-$i%03d")))
    kinesis.split(stream, parent)
    val after = kinesis.putAll(stream, (1 to 30).map(i => (s"key-${i % 6}", f"after-$i%03d")))
    val read = collect(batchReader(stream, "initialPosition" -> "trim_horizon"))
    assertExactly(read, before ++ after)
    val putOrder = (before ++ after).zipWithIndex.map { case (p, i) => p.sequenceNumber -> i }.toMap
    for ((key, rs) <- read.groupBy(_.partitionKey)) {
      val order = rs.map(r => putOrder(r.sequenceNumber))
      assert(order == order.sorted, s"key $key out of order")
    }
  }

  test("each read ends at the tip seen when it was planned; by default from trim_horizon, latest reads nothing old") {
    val stream = newStreamName("bounded")
    kinesis.createStream(stream, 1)
    val first = kinesis.putAll(stream, (1 to 12).map(i => ("k", s"v$i")))
    assertExactly(collect(batchReader(stream, "initialPosition" -> "trim_horizon")), first)
    val more = kinesis.putAll(stream, (13 to 17).map(i => ("k", s"v$i")))
    val putDone = System.currentTimeMillis()
    assertExactly(collect(batchReader(stream)), first ++ more) // a batch read starts at trim_horizon by default
    // `latest` reaches back a little before the start (a Date header's whole second, a margin for skew).
    Wait.until("the last records to be older than latest's margin") {
      System.currentTimeMillis() - putDone > FetchPlanner.LatestLookBackMillis
    }
    assert(collect(batchReader(stream, "initialPosition" -> "latest")).isEmpty, "latest starts after everything there")
  }

  test("endingPosition=at_timestamp ends before the first record that arrived at or after endingTimestamp") {
    val stream = newStreamName("ending")
    kinesis.createStream(stream, 2)
    val before = kinesis.putAll(stream, (1 to 20).map(i => (s"key-${i % 4}", s"before-$i")))
    val lastBefore = kinesis.shardIds(stream).flatMap(kinesis.arrivalMillis(stream, _)).max
    // The emulator stamps arrivals with this machine's clock: records put from here on arrive after the end.
    val end = lastBefore + 1
    Wait.until("the clock to pass the end") { System.currentTimeMillis() > end }
    val after = kinesis.putAll(stream, (1 to 10).map(i => (s"key-${i % 4}", s"after-$i")))
    val bounded = Seq("endingPosition" -> "at_timestamp", "endingTimestamp" -> end.toString)
    assertExactly(collect(batchReader(stream, bounded: _*)), before)
    val iso = Seq("endingPosition" -> "AT_TIMESTAMP", "endingTimestamp" -> java.time.Instant.ofEpochMilli(end).toString)
    assertExactly(readAvailableNow(kinesisReader(stream, ("initialPosition" -> "trim_horizon") +: iso: _*)).records, before)
    val future = (System.currentTimeMillis() + 3600000L).toString
    assertExactly(
      collect(batchReader(stream, "endingPosition" -> "at_timestamp", "endingTimestamp" -> future)),
      before ++ after) // an end after the tip ends at the tip
  }

  test("endingPosition per shard: after_sequence_number includes the record, at_sequence_number stops before it") {
    val stream = newStreamName("ending-shards")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, (1 to 24).map(i => (s"key-$i", s"v$i")))
    val Seq(a, b) = kinesis.shardIds(stream).sorted
    val (inA, inB) = (put.filter(_.shardId == a), put.filter(_.shardId == b))
    assert(inA.size >= 3 && inB.size >= 2, "the keys spread over both shards")
    val end = s"""{"$a": {"after_sequence_number": "${inA(2).sequenceNumber}"}, """ +
      s""""$b": {"at_sequence_number": "${inB(1).sequenceNumber}"}}"""
    assertExactly(collect(batchReader(stream, "endingPosition" -> end)), inA.take(3) ++ inB.take(1))

    val unknown = intercept[IllegalArgumentException](collect(batchReader(stream,
      "endingPosition" -> """{"shardId-000000000009": {"after_sequence_number": "1"}}"""))).getMessage
    assert(unknown.startsWith(s"Option 'endingPosition' names shards that do not exist: $stream/shardId-000000000009"),
      unknown)
    val start = s"""{"$a": {"after_sequence_number": "${inA(2).sequenceNumber}"}}"""
    val backwards = intercept[IllegalArgumentException](collect(batchReader(stream, "initialPosition" -> start,
      "endingPosition" -> s"""{"$a": {"after_sequence_number": "${inA(1).sequenceNumber}"}}"""))).getMessage
    assert(backwards.startsWith(s"Option 'endingPosition' ends shard $stream/$a at "), backwards)
  }

  test("per-shard ends bound Trigger.AvailableNow too; a later run reads no further in a shard at its end") {
    val stream = newStreamName("ending-avnow")
    kinesis.createStream(stream, 3)
    val put = kinesis.putAll(stream, (1 to 36).map(i => (s"key-$i", s"v$i")))
    val Seq(a, b, c) = kinesis.shardIds(stream).sorted
    val Seq(inA, inB, inC) = Seq(a, b, c).map(s => put.filter(_.shardId == s))
    assert(inA.size >= 3 && inB.size >= 2 && inC.nonEmpty, "the keys spread over every shard")
    val options = Seq("initialPosition" -> "trim_horizon", "endingPosition" -> (
      s"""{"$a": {"after_sequence_number": "${inA(2).sequenceNumber}"}, """ +
        s""""$b": {"at_sequence_number": "${inB(1).sequenceNumber}"}}"""))
    val checkpoint = newCheckpoint()
    // Shard c, not named, ends at the tip seen at the start.
    assertExactly(readAvailableNow(kinesisReader(stream, options: _*), checkpoint).records,
      inA.take(3) ++ inB.take(1) ++ inC)
    val later = kinesis.putAll(stream, (1 to 36).map(i => (s"key-$i", s"later-$i")))
    assertExactly(readAvailableNow(kinesisReader(stream, options: _*), checkpoint).records,
      later.filter(_.shardId == c))
  }

  test("endingPosition given a query's committed offset reads exactly what that query had read") {
    val stream = newStreamName("ending-offset")
    kinesis.createStream(stream, 2)
    val first = kinesis.putAll(stream, (1 to 15).map(i => (s"key-$i", s"first-$i")))
    val checkpoint = newCheckpoint()
    readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon"), checkpoint)
    kinesis.putAll(stream, (1 to 10).map(i => (s"key-$i", s"later-$i")))
    val logs = new java.io.File(checkpoint, "offsets").listFiles().filter(_.getName.forall(_.isDigit))
    val committed = scala.io.Source.fromFile(logs.maxBy(_.getName.toInt), "UTF-8")
    val offset = try committed.getLines().toSeq.last finally committed.close()
    assertExactly(collect(batchReader(stream, "endingPosition" -> offset)), first)
  }
}
