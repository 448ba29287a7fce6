package io.github.sparkkinesis.it

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.{KinesisSinks, RetryStrategies}
import org.apache.spark.scheduler.{SparkListener, SparkListenerStageCompleted}
import org.apache.spark.sql.{DataFrame, Encoders, Row, SaveMode}
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.QueryExecutionListener
import org.scalatest.concurrent.Eventually
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.{Seconds, Span}

/**
 * The sink against a real Kinesis emulator: what it writes is read back with the independent, unshaded SDK
 * client, never through the connector under test.
 */
class KinesisSinkSuite extends AnyFunSuite with EmulatorSuite with SparkSuite with Eventually {
  override implicit val patienceConfig: PatienceConfig = PatienceConfig(timeout = Span(20, Seconds))

  private def connection: Map[String, String] = Map(
    "endpoint" -> emulator.endpoint.toString, "region" -> TestEnv.region,
    "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey)

  private def options(stream: String): Map[String, String] = connection + ("streamName" -> stream)

  private def stream(shards: Int): String = {
    val name = newStreamName("sink")
    kinesis.createStream(name, shards)
    name
  }

  private def contents(stream: String): Seq[StoredRecord] = StreamContents.read(kinesis.client, stream)

  private def writeBatch(df: DataFrame, opts: Map[String, String]): Unit =
    df.write.format("kinesis").mode(SaveMode.Append).options(opts).save()

  /** Every message in a failure's cause chain: Spark wraps task failures more than once. */
  private def messages(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(t => s"${t.getClass.getName}: ${t.getMessage}").mkString("\n")

  private def failure(write: => Unit): String = messages(intercept[Exception](write))

  /** `count` records over keys k0, k1, ... of 40 consecutive ids each, so no key spans the two input partitions. */
  private def keyed(count: Int): DataFrame = spark.range(0, count, 1, 2).select(
    concat(lit("k"), (col("id") / 40).cast("long").cast("string")).as("partitionKey"),
    col("id").cast("string").cast("binary").as("data"))

  /** Ids in the order a key's records are stored, for every key. */
  private def idsByKey(records: Seq[StoredRecord]): Map[String, Seq[Long]] =
    records.groupBy(_.partitionKey).map { case (k, rs) => k -> rs.map(_.text.toLong) }

  private def schemaOf(fields: (String, DataType)*) = StructType(fields.map { case (n, t) => StructField(n, t) })

  private def rows(schema: StructType, values: Seq[Seq[Any]]): DataFrame =
    spark.createDataFrame(values.map(Row.fromSeq).asJava, schema).coalesce(1)

  test("Kinesis routes a key by the MD5 of its UTF-8 bytes, unsigned, into the range holding it (the sink paces shards by it)") {
    val name = stream(2)
    kinesis.split(name, kinesis.shardIds(name).min)
    val open = kinesis.client.listShards(software.amazon.awssdk.services.kinesis.model.ListShardsRequest.builder()
      .streamName(name).build()).shards().asScala.filter(_.sequenceNumberRange().endingSequenceNumber() == null)
    val starts = open.map(s => BigInt(s.hashKeyRange().startingHashKey()) -> s.shardId()).sortBy(_._1)
    assert(starts.size == 3)
    for (i <- 0 until 60) {
      val key = s"user-$i-ü"
      val hash = BigInt(1, java.security.MessageDigest.getInstance("MD5").digest(key.getBytes("UTF-8")))
      val expected = starts.filter(_._1 <= hash).last._2
      assert(kinesis.put(name, key, Array[Byte](1)).shardId() == expected, s"key $key")
    }
  }

  test("batch write: every record lands once with its key and payload, each key in order; metrics count them") {
    val name = stream(shards = 2)
    val metrics = new StageAccumulables
    spark.sparkContext.addSparkListener(metrics)
    try {
      writeBatch(keyed(2000), options(name))
      // Listener events arrive asynchronously: stay registered until they have.
      eventually(assert(metrics("records written to Kinesis") == 2000, metrics))
    } finally spark.sparkContext.removeSparkListener(metrics)

    val stored = contents(name)
    assert(stored.size == 2000)
    assert(stored.map(_.text.toLong).sorted == (0L until 2000L))
    stored.foreach(r => assert(r.partitionKey == s"k${r.text.toLong / 40}", r))
    assert(stored.map(_.shardId).distinct.size == 2, "50 keys spread over both shards")
    idsByKey(stored).foreach { case (k, ids) => assert(ids == ids.sorted, s"key $k out of order: $ids") }
    assert(metrics("bytes written to Kinesis (data plus partition keys)") == stored.map(r => r.data.length + r.partitionKey.length).sum)
    assert(metrics("records Kinesis refused for throughput (resent)") == 0, "kinesis-mock never throttles")
    assert(metrics("flow-control pause between sends, ms (max over tasks)") == 0, "no throttling, no pause")
    assert(metrics("PutRecords batch size allowed by flow control (average over tasks)") == 2 * 500,
      "both tasks keep full batches (the accumulable sums the tasks' values)")
  }

  test("string data, explicit hash keys route to the named shard, 256-character keys are accepted") {
    val name = stream(shards = 2)
    val schema = schemaOf("partitionKey" -> StringType, "data" -> StringType, "explicitHashKey" -> StringType)
    val longKey = "x" * 256
    writeBatch(rows(schema, Seq(
      Seq("a", "first", "0"),
      Seq("a", "last", "340282366920938463463374607431768211455"),
      Seq(longKey, "ümlaut ✓", null))), options(name))
    val stored = contents(name)
    val shards = kinesis.shardIds(name).sorted
    assert(stored.find(_.text == "first").map(_.shardId).contains(shards.head))
    assert(stored.find(_.text == "last").map(_.shardId).contains(shards.last))
    assert(stored.find(_.partitionKey == longKey).map(_.text).contains("ümlaut ✓"))
  }

  test("the builder's generic form writes key and value expressions; build gives a writer in append mode") {
    val name = stream(shards = 1)
    val people = spark.range(0, 30, 1, 2).select(col("id").as("user_id"), concat(lit("n"), col("id")).as("name"))
    val builder = KinesisSinks.kinesis(name, col("user_id"), to_json(struct(col("user_id"), col("name"))))
      .withEndpoint(emulator.endpoint.toString).withRegion(TestEnv.region)
      .withCredentials(TestEnv.accessKey, TestEnv.secretKey)
      .withRetryStrategy(RetryStrategies.exponential(50, 500, 10))
    builder.buildBatch(people).save()
    val stored = contents(name)
    assert(stored.size == 30)
    assert(stored.map(r => r.partitionKey -> r.text).toSet ==
      (0 until 30).map(i => i.toString -> s"""{"user_id":$i,"name":"n$i"}""").toSet)
    assert(builder.build(people).isInstanceOf[org.apache.spark.sql.DataFrameWriter[_]])

    val wrong = intercept[IllegalArgumentException](KinesisSinks.kinesis(name, col("user_id"), col("user_id"))
      .withEndpoint(emulator.endpoint.toString).build(people))
    assert(wrong.getMessage.contains("column 'data' has type bigint; expected binary or string"),
      "the builder checks the input before any query starts")
  }

  test("a DataFrame with the source's columns writes back unchanged; streamName wins over its stream column") {
    val name = stream(shards = 1)
    val sourceLike = spark.range(0, 20, 1, 1).select(
      col("id").cast("string").as("partitionKey"), col("id").cast("string").cast("binary").as("data"),
      lit("some-other-stream").as("stream"), lit("shardId-000000000000").as("shardId"),
      col("id").cast("string").as("sequenceNumber"), lit(0L).as("subSequenceNumber"),
      current_timestamp().as("approximateArrivalTimestamp"))
    writeBatch(sourceLike, options(name))
    assert(contents(name).map(_.text.toInt).sorted == (0 until 20))
  }

  test("without streamName the stream column routes each row to its stream") {
    val (a, b) = (stream(shards = 1), stream(shards = 1))
    val df = spark.range(0, 40, 1, 2).select(col("id").cast("string").as("partitionKey"),
      col("id").cast("string").as("data"), when(col("id") % 2 === 0, lit(a)).otherwise(lit(b)).as("stream"))
    writeBatch(df, connection)
    assert(contents(a).map(_.text.toInt).sorted == (0 until 40 by 2))
    assert(contents(b).map(_.text.toInt).sorted == (1 until 40 by 2))
  }

  test("a task writing six streams holds no more than one stream's bound across them; records per request counted") {
    val streams = Seq.fill(6)(stream(shards = 1))
    // 1 KiB requests, one in flight: each stream alone may hold (1 + 4) KiB, six of them 30 KiB without the bound.
    val bound = (1 + 4) * 1024L
    val df = spark.range(0, 1200, 1, 1).select(concat(lit("k"), col("id") % 3).as("partitionKey"),
      concat(col("id").cast("string"), lit(":"), repeat(lit("x"), 150)).as("data"),
      element_at(array(streams.map(lit): _*), (col("id") % 6 + 1).cast("int")).as("stream"))
    val metrics = new StageAccumulables
    spark.sparkContext.addSparkListener(metrics)
    try {
      writeBatch(df, connection ++ Map("maxBytesPerRequest" -> "1024", "maxInFlightRequests" -> "1"))
      eventually(assert(metrics("records written to Kinesis") == 1200, metrics))
    } finally spark.sparkContext.removeSparkListener(metrics)
    val peak = metrics("most record bytes a task held at once, all its streams (max over tasks)")
    assert(peak > 0 && peak <= bound + 200, s"one task held $peak bytes; the bound is $bound plus one record")
    val requests = metrics("PutRecords requests sent (resends included)")
    assert(requests >= 1200 / 6, "a 1 KiB request takes at most six of these records")
    assert(metrics("records per PutRecords request (average over tasks that sent)") == 1200 / requests)
    for ((s, i) <- streams.zipWithIndex) {
      val stored = contents(s)
      assert(stored.map(_.text.takeWhile(_ != ':').toLong).sorted == (i.toLong until 1200L by 6))
      stored.groupBy(_.partitionKey).values.foreach { rs =>
        val ids = rs.map(_.text.takeWhile(_ != ':').toLong)
        assert(ids == ids.sorted, s"stream $s key ${rs.head.partitionKey} out of order")
      }
    }
  }

  test("preserveKeyOrder keeps a hot key's order through several requests in flight") {
    val name = stream(shards = 2)
    val df = spark.range(0, 1500, 1, 1).select(
      when(col("id") % 3 === 0, lit("hot")).otherwise(concat(lit("c"), col("id") % 7)).as("partitionKey"),
      col("id").cast("string").as("data"))
    writeBatch(df, options(name) ++ Map("preserveKeyOrder" -> "true", "maxInFlightRequests" -> "3",
      "maxRecordsPerRequest" -> "100"))
    val stored = contents(name)
    assert(stored.size == 1500)
    idsByKey(stored).foreach { case (k, ids) => assert(ids == ids.sorted, s"key $k out of order") }
    assert(idsByKey(stored)("hot").size == 500)
  }

  test("clusterByPartitionKey shuffles the input by partition key before the write") {
    val name = stream(shards = 1)
    val plans = new PlanCollector
    spark.listenerManager.register(plans)
    try {
      writeBatch(keyed(200), options(name) + ("clusterByPartitionKey" -> "true"))
      eventually(assert(plans.plans.asScala.exists(_.contains("hashpartitioning(partitionKey")), plans.plans))
    } finally spark.listenerManager.unregister(plans)
    assert(contents(name).size == 200)
  }

  test("df.write needs append mode (Spark's rule for sources without tables); the builder sets it") {
    val m = failure(keyed(3).write.format("kinesis").options(options(stream(shards = 1))).save())
    assert(m.contains("ErrorIfExists") && m.contains("Append"), m)
  }

  test("an empty DataFrame writes nothing and succeeds") {
    val name = stream(shards = 1)
    writeBatch(keyed(0), options(name))
    assert(contents(name).isEmpty)
  }

  test("missing or mistyped columns fail before anything is sent, naming the column and the expected type") {
    val name = stream(shards = 1)
    val noData = failure(writeBatch(keyed(10).drop("data"), options(name)))
    assert(noData.contains("no 'data' column") && noData.contains("binary or string"), noData)
    val wrongType = failure(writeBatch(keyed(10).withColumn("data", lit(1)), options(name)))
    assert(wrongType.contains("column 'data' has type int; expected binary or string"), wrongType)
    val noStream = failure(writeBatch(keyed(10), connection))
    assert(noStream.contains("set the 'streamName' option or give the input a 'stream' column"), noStream)
    assert(contents(name).isEmpty)
  }

  test("a null key fails the task naming the limit; every record accepted before it is delivered") {
    val name = stream(shards = 1)
    val schema = schemaOf("partitionKey" -> StringType, "data" -> StringType)
    val input = (0 until 100).map(i => Seq(s"k$i", s"$i")) :+ Seq(null, "bad")
    val m = failure(writeBatch(rows(schema, input), options(name)))
    assert(m.contains("partitionKey is null") && m.contains("1 to 256 characters"), m)
    assert(contents(name).map(_.text.toInt).sorted == (0 until 100))
  }

  /** Runs `block` with the SDK's region chain finding TestEnv.region (the `aws.region` system property). */
  private def withRegionFromChain[T](block: => T): T = {
    val before = Option(System.getProperty("aws.region"))
    System.setProperty("aws.region", TestEnv.region)
    try block
    finally before.fold(System.clearProperty("aws.region"))(System.setProperty("aws.region", _))
  }

  test("poison rows fail the task naming column, problem and row; the rows before are stored, nothing of the row") {
    val name = stream(shards = 1)
    val good = (0 until 50).map(i => (s"k$i", s"$i"))
    val otherRegion = if (TestEnv.region == "eu-west-1") "us-west-2" else "eu-west-1"
    // The stream written to, by ARN of another region: were the region not checked, it would be written here.
    val otherRegionArn = s"arn:aws:kinesis:$otherRegion:000000000000:stream/$name"
    // Each case: the poison row's stream, key (hex of its UTF-8 bytes), data and hash key, and what the failure says.
    val cases = Seq(
      ("lone surrogate in the key", name, "6BEDA080", "x", null,
        "is not valid UTF-8: it holds an encoded lone surrogate (invalid UTF-16) at byte 1 (ED A0 80)"),
      ("stray byte in the key", name, "6BFF", "x", null, "is not valid UTF-8: it holds bytes that are not UTF-8 at byte 1"),
      ("hash key out of range", name, "6B", "x", "340282366920938463463374607431768211456",
        "explicitHashKey '340282366920938463463374607431768211456' of partitionKey 'k' is not a decimal integer"),
      ("hash key with a leading zero", name, "6B", "x", "007",
        "explicitHashKey '007' of partitionKey 'k' is not a decimal integer in 0..2^128-1 (digits only, no sign, no leading zero)"),
      ("null data", name, "6B", null, null, "data is null for partitionKey 'k'"),
      ("missing stream", "no-such-stream", "6B", "x", null,
        "the 'stream' column names a stream that does not exist (Kinesis stream 'no-such-stream' not found"),
      ("not a stream name", "orders/eu", "6B", "x", null, "the 'stream' column's value cannot name a Kinesis stream"),
      ("an ARN of another region", otherRegionArn, "6B", "x", null,
        s"the 'stream' column names a stream in region $otherRegion but the sink writes to region ${TestEnv.region}"))
    val schema = schemaOf("stream" -> StringType, "keyHex" -> StringType, "data" -> StringType,
      "explicitHashKey" -> StringType)
    for ((what, target, keyHex, data, hashKey, problem) <- cases) {
      val before = contents(name).size
      val input = good.map { case (k, d) => Seq(name, k.getBytes("UTF-8").map("%02X".format(_)).mkString, d, null) } :+
        Seq(target, keyHex, data, hashKey)
      // A string column holding bytes that are not UTF-8, as a cast from binary makes one.
      val df = rows(schema, input)
        .select(col("stream"), unhex(col("keyHex")).cast("string").as("partitionKey"), col("data"), col("explicitHashKey"))
      // The region from the SDK's chain rather than the option: the check must hold either way.
      val m = withRegionFromChain(failure(writeBatch(df, connection - "region")))
      assert(m.contains(s"cannot write row 51 of this task (partition 0) to stream '$target'") && m.contains(problem) &&
        m.contains("Nothing of that row was sent"), s"$what: $m")
      val stored = contents(name).map(_.text)
      assert(stored.size == before + 50, s"$what: the 50 rows before the poison row, all stored")
      assert(!stored.contains("x"), s"$what: the poison row was stored")
    }
  }

  test("a 257-character key fails naming the key (truncated) and the limit") {
    val name = stream(shards = 1)
    val schema = schemaOf("partitionKey" -> StringType, "data" -> StringType)
    val m = failure(writeBatch(rows(schema, Seq(Seq("ok", "1"), Seq("y" * 257, "2"))), options(name)))
    assert(m.contains("y" * 40 + "...' (257 characters)") && m.contains("1 to 256") && !m.contains("y" * 41), m)
    assert(contents(name).map(_.text) == Seq("1"))
  }

  test("a record one byte over the stream's maximum record size fails naming the limit; one at the limit is written") {
    val name = stream(shards = 1)
    val limit = 1024 * 1024 // kinesis-mock reports no MaxRecordSizeInKiB: Kinesis's default applies
    val schema = schemaOf("partitionKey" -> StringType, "data" -> BinaryType)
    writeBatch(rows(schema, Seq(Seq("key", new Array[Byte](limit - 3)))), options(name))
    assert(contents(name).map(_.data.length) == Seq(limit - 3))
    val m = failure(writeBatch(rows(schema, Seq(Seq("key", new Array[Byte](limit - 2)))), options(name)))
    assert(m.contains(s"is ${limit + 1} bytes") && m.contains(s"the limit is $limit bytes") && m.contains("'key'"), m)
    assert(contents(name).size == 1)
  }

  test("a stream that does not exist fails naming stream, region and endpoint") {
    val m = failure(writeBatch(keyed(5), options("no-such-stream")))
    assert(m.contains(s"Kinesis stream 'no-such-stream' not found in region ${TestEnv.region} " +
      s"(endpoint ${emulator.endpoint})"), m)
  }

  test("a stream deleted under a running writer fails its PutRecords with the not-found message") {
    val name = stream(shards = 1)
    // Routing by the stream column makes the executor describe the stream; that answer is cached for 30 s, so
    // the second write skips DescribeStreamSummary and meets the missing stream in PutRecords itself.
    val df = keyed(5).withColumn("stream", lit(name))
    writeBatch(df, connection)
    kinesis.client.deleteStream(software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest.builder()
      .streamName(name).build())
    eventually(assert(!kinesis.client.listStreams().streamNames().contains(name)))
    val m = failure(writeBatch(df, connection))
    assert(m.contains(s"Kinesis stream '$name' not found in region ${TestEnv.region}"), m)
  }

  test("an unreachable endpoint fails once the retry policy is used up, naming the call and the stream") {
    val closedPort = { val s = new java.net.ServerSocket(0); try s.getLocalPort finally s.close() }
    val m = failure(writeBatch(keyed(5), options("any") ++ Map("endpoint" -> s"http://127.0.0.1:$closedPort",
      "retryMaxAttempts" -> "2", "retryInitialBackoff" -> "10ms", "retryMaxBackoff" -> "20ms")))
    assert(m.contains("DescribeStreamSummary of stream 'any' failed and was not retried further"), m)
  }

  test("streaming write: each micro-batch is in the stream when it commits, keys in order") {
    val name = stream(shards = 2)
    val input = MemoryStream[Long](Encoders.scalaLong, spark.sqlContext)
    val query = input.toDF().select(concat(lit("k"), col("value") % 5).as("partitionKey"), col("value").cast("string").as("data"))
      .writeStream.format("kinesis").options(options(name))
      .option("checkpointLocation", TempDirs.create("sink-ckpt").toString).start()
    try {
      input.addData(0L until 300L)
      query.processAllAvailable()
      assert(contents(name).size == 300, "a committed micro-batch is acknowledged in full")
      input.addData(300L until 500L)
      query.processAllAvailable()
      val progress = query.lastProgress.sink.metrics.asScala
      assert(progress("recordsWritten") == "200", "the last micro-batch's records, in StreamingQueryProgress")
      assert(progress("bytesWritten") == (300 until 500).map(i => i.toString.length + s"k${i % 5}".length).sum.toString)
      assert(progress("throttledRecords") == "0" && progress("retriedRecords") == "0")
    } finally query.stop()
    val stored = contents(name)
    assert(stored.map(_.text.toLong).sorted == (0L until 500L))
    idsByKey(stored).foreach { case (k, ids) => assert(ids == ids.sorted, s"key $k out of order") }
  }

  test("streaming complete mode appends the whole result each micro-batch; update mode appends the updated rows") {
    val name = stream(shards = 1)
    val input = MemoryStream[Long](Encoders.scalaLong, spark.sqlContext)
    val counts = input.toDF().groupBy((col("value") % 2).cast("string").as("partitionKey")).count()
      .select(col("partitionKey"), col("count").cast("string").as("data"))
    def start(mode: String) = counts.writeStream.format("kinesis").options(options(name)).outputMode(mode)
      .option("checkpointLocation", TempDirs.create("sink-ckpt").toString).start()
    val query = start("complete")
    try {
      input.addData(1L to 3L)
      query.processAllAvailable()
      input.addData(4L to 4L)
      query.processAllAvailable()
    } finally query.stop()
    assert(contents(name).map(r => r.partitionKey -> r.text).sorted == Seq("0" -> "1", "0" -> "2", "1" -> "2", "1" -> "2"))
    val before = contents(name).size
    val input2 = MemoryStream[Long](Encoders.scalaLong, spark.sqlContext)
    val update = input2.toDF().groupBy((col("value") % 2).cast("string").as("partitionKey")).count()
      .select(col("partitionKey"), col("count").cast("string").as("data"))
      .writeStream.format("kinesis").options(options(name)).outputMode("update")
      .option("checkpointLocation", TempDirs.create("sink-ckpt").toString).start()
    try {
      input2.addData(1L to 3L)
      update.processAllAvailable()
      input2.addData(5L)
      update.processAllAvailable()
    } finally update.stop()
    val appended = contents(name).drop(before).map(r => r.partitionKey -> r.text)
    assert(appended.take(2).toSet == Set("0" -> "1", "1" -> "2") && appended.drop(2) == Seq("1" -> "3"),
      s"update mode appends each batch's updated rows only: $appended")
  }

  test("streaming: a query without a data column fails at start naming the column") {
    val input = MemoryStream[Long](Encoders.scalaLong, spark.sqlContext)
    val query = input.toDF().select(col("value").cast("string").as("partitionKey"))
      .writeStream.format("kinesis").options(options(stream(shards = 1)))
      .option("checkpointLocation", TempDirs.create("sink-ckpt").toString).start()
    input.addData(1L)
    val m = failure(query.awaitTermination())
    assert(m.contains("no 'data' column"), m)
  }

  test("streaming restart after a failure mid-batch: every record present, duplicates only from the failed batch") {
    val name = stream(shards = 1)
    val checkpoint = TempDirs.create("sink-ckpt").toString
    val input = MemoryStream[Long](Encoders.scalaLong, spark.sqlContext)
    val failing = udf((id: Long) => { SinkFailureSwitch.check(id); id })
    // One record per request, one request in flight: a task holds at most 3 records unacknowledged, so most of
    // the failing batch is in the stream when the failure hits, and its replay must produce duplicates.
    def start() = input.toDF().select(lit("key").as("partitionKey"), failing(col("value")).cast("string").as("data"))
      .writeStream.format("kinesis").options(options(name) ++ Map("maxRecordsPerRequest" -> "1",
        "maxInFlightRequests" -> "1")).option("checkpointLocation", checkpoint).start()

    val first = start()
    input.addData(1L to 100L)
    first.processAllAvailable()
    SinkFailureSwitch.arm(150L)
    input.addData(101L to 200L)
    val m = failure(first.processAllAvailable())
    assert(m.contains("injected failure at id 150"), m)
    first.stop()
    val beforeRestart = contents(name).map(_.text.toLong).toSet
    assert((101L to 146L).forall(beforeRestart.contains), "all but the last three records before the failure were delivered")

    SinkFailureSwitch.disarm()
    val second = start()
    try {
      second.processAllAvailable()
      input.addData(201L to 250L)
      second.processAllAvailable()
    } finally second.stop()

    val ids = contents(name).map(_.text.toLong)
    assert(ids.toSet == (1L to 250L).toSet, "every record present")
    val duplicates = ids.size - ids.distinct.size
    info(s"$duplicates duplicate(s) from replaying the failed micro-batch")
    assert(duplicates >= 46 && duplicates <= 100, s"duplicates come only from the replayed batch 101..200: $duplicates")
    assert(ids.groupBy(identity).collect { case (id, n) if n.size > 1 => id }.forall(id => id >= 101 && id <= 149))
  }

  private final class PlanCollector extends QueryExecutionListener {
    val plans = new java.util.concurrent.CopyOnWriteArrayList[String]()
    override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit =
      plans.add(qe.executedPlan.toString)
    override def onFailure(funcName: String, qe: QueryExecution, exception: Exception): Unit = ()
  }
}

/** Fails the row with one id, once armed; lives in the executor JVM (local mode: the test's own). */
object SinkFailureSwitch {
  val failingId = new AtomicLong(-1L)
  def arm(id: Long): Unit = failingId.set(id)
  def disarm(): Unit = failingId.set(-failingId.get())
  def check(id: Long): Unit =
    if (failingId.get() == id) throw new IllegalStateException(s"injected failure at id $id")
}
