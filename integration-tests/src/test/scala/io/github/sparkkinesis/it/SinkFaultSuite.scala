package io.github.sparkkinesis.it

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

/** The sink against the simulator's faults: per-record failures are resent, request failures retried, none lost. */
class SinkFaultSuite extends AnyFunSuite with SimulatorSuite with SparkSuite {

  private def write(stream: String, df: DataFrame, extra: (String, String)*): Unit =
    df.write.format("kinesis").mode(SaveMode.Append).options(Map(
      "streamName" -> stream, "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey) ++ extra).save()

  private def ids(n: Int): DataFrame = spark.range(0, n, 1, 2)
    .select(concat(lit("k"), (col("id") % 13).cast("string")).as("partitionKey"), col("id").cast("string").as("data"))

  private def stored(stream: String): Seq[Long] =
    StreamContents.read(simulatorKinesis.client, stream).map(_.text.toLong)

  private def newStream(): String = {
    val name = TestKinesis.freshName("sinkfault")
    simulatorKinesis.createStream(name, 2)
    name
  }

  private def failedRecords(stream: String): Long =
    simulatorKinesis.shardIds(stream).map(simulator.admin.shardCounter(stream, _, "failedPutRecords")).sum

  test("records Kinesis refuses inside PutRecords (InternalFailure) are resent until stored, none lost or doubled") {
    val stream = newStream()
    simulator.admin.faults("""[{"kind": "recordFailure", "operations": ["PutRecords"], "probability": 0.3, "maxCount": 80}]""", seed = 3)
    try write(stream, ids(400)) finally simulator.admin.clearFaults()
    assert(failedRecords(stream) > 0, "the fault never fired: the test would prove nothing")
    assert(stored(stream).sorted == (0L until 400L))
  }

  test("DescribeStreamSummary refused for the account's rate (LimitExceededException) is retried: the writes succeed") {
    // A twentieth of AWS's quotas: DescribeStreamSummary at 1 call/s for the account. Writes to fresh streams one
    // after another each describe their stream once, faster than that.
    val streams = Seq.fill(4)(newStream())
    simulator.admin.quotas(enabled = true, factor = 0.05)
    try streams.foreach(s => write(s, ids(20)))
    finally simulator.admin.quotas(enabled = true)
    assert(simulator.admin.operationCounter("DescribeStreamSummary", "throttled") > 0, "the account quota never refused")
    streams.foreach(s => assert(stored(s).sorted == (0L until 20L)))
  }

  test("HTTP 500s and connection resets mid-write are retried; nothing is lost (duplicates allowed)") {
    val stream = newStream()
    simulator.admin.faults(
      """[{"kind": "http500", "operations": ["PutRecords"], "probability": 0.5, "maxCount": 6},
        | {"kind": "reset", "operations": ["PutRecords"], "probability": 0.3, "maxCount": 3}]""".stripMargin, seed = 5)
    try write(stream, ids(400)) finally simulator.admin.clearFaults()
    assert(simulator.admin.operationCounter("PutRecords", "faults") > 0, "the faults never fired")
    assert(stored(stream).toSet == (0L until 400L).toSet)
  }

  test("write quotas on: throttled records are resent, flow control pauses and shrinks batches, nothing is lost") {
    val stream = TestKinesis.freshName("sinkquota")
    simulatorKinesis.createStream(stream, 1)
    val metrics = new StageAccumulables
    spark.sparkContext.addSparkListener(metrics)
    try {
      write(stream, ids(4000)) // four seconds of one shard's 1000 records/s quota, sent as fast as two tasks can
      Wait.until("the write's metrics to arrive") { metrics("records written to Kinesis") == 4000 }
    } finally spark.sparkContext.removeSparkListener(metrics)
    assert(stored(stream).sorted == (0L until 4000L))
    val throttled = simulatorKinesis.shardIds(stream).map(simulator.admin.shardCounter(stream, _, "throttledPutRecords")).sum
    assert(throttled > 0, "the shard never throttled: the test would prove nothing")
    assert(metrics("records Kinesis refused for throughput (resent)") == throttled)
    assert(metrics("flow-control pause between sends, ms (max over tasks)") > 0, s"flow control never paused: $metrics")
  }

  test("quotas off: flow control stays off, full batches and no pause") {
    val stream = newStream()
    val metrics = new StageAccumulables
    simulator.admin.quotas(enabled = false)
    spark.sparkContext.addSparkListener(metrics)
    try {
      write(stream, ids(3000))
      Wait.until("the write's metrics to arrive") { metrics("records written to Kinesis") == 3000 }
    } finally {
      spark.sparkContext.removeSparkListener(metrics)
      simulator.admin.quotas(enabled = true)
    }
    assert(stored(stream).sorted == (0L until 3000L))
    assert(metrics("records Kinesis refused for throughput (resent)") == 0)
    assert(metrics("flow-control pause between sends, ms (max over tasks)") == 0, "a pause was inserted")
    assert(metrics("PutRecords batch size allowed by flow control (average over tasks)") == 2 * 500, "full batches in both tasks")
  }

  test("requests that hang are cut by the attempt timeout and retried; nothing is lost") {
    val stream = newStream()
    // A hang lasts five minutes: only the attempt timeout lets the write finish within the wait below.
    simulator.admin.faults("""[{"kind": "hang", "operations": ["PutRecords"], "probability": 0.5, "maxCount": 2, "hangMillis": 300000}]""", seed = 11)
    try {
      val writing = Future(write(stream, ids(400), "apiCallAttemptTimeout" -> "2s"))(ExecutionContext.global)
      Await.result(writing, 90.seconds)
    } finally simulator.admin.clearFaults()
    assert(simulator.admin.operationCounter("PutRecords", "faults") > 0, "no request hung: the test would prove nothing")
    assert(stored(stream).toSet == (0L until 400L).toSet)
  }

  /** Writes `perKey` records for each of three keys, interleaved, from one task; returns each key's stored order. */
  private def writeOrdered(perKey: Int, preserveKeyOrder: Boolean): Map[String, Seq[Int]] = {
    val stream = newStream()
    val rows = spark.range(0, 3L * perKey, 1, 1).select(
      concat(lit("key"), (col("id") % 3).cast("string")).as("partitionKey"),
      (col("id") / 3).cast("int").cast("string").as("data"))
    simulator.admin.faults("""[{"kind": "recordFailure", "operations": ["PutRecords"], "probability": 0.2,
      | "maxCount": 60, "partitionKeys": ["key0", "key1", "key2"]}]""".stripMargin, seed = 17)
    try write(stream, rows, "preserveKeyOrder" -> preserveKeyOrder.toString, "retryMaxBackoff" -> "200ms")
    finally simulator.admin.clearFaults()
    assert(failedRecords(stream) > 0, "no record failed: the test would prove nothing")
    StreamContents.read(simulatorKinesis.client, stream).groupBy(_.partitionKey).view
      .mapValues(_.map(_.text.toInt)).toMap
  }

  test("preserveKeyOrder: with records of a key failing inside requests, every key is stored in input order") {
    val stored = writeOrdered(perKey = 300, preserveKeyOrder = true)
    assert(stored.keySet == Set("key0", "key1", "key2"))
    stored.foreach { case (key, seqs) => assert(seqs == (0 until 300), s"$key stored out of order: $seqs") }
  }

  test("without preserveKeyOrder the same failures reorder a key (the documented trade-off), losing nothing") {
    val stored = writeOrdered(perKey = 300, preserveKeyOrder = false)
    stored.foreach { case (key, seqs) => assert(seqs.sorted == (0 until 300), s"$key lost or doubled records") }
    assert(stored.values.exists(seqs => seqs != seqs.sorted),
      "no key was reordered: the test above would pass without the option")
  }

  test("when retries run out, the task fails naming the stream, the error code and the count") {
    val stream = newStream()
    simulator.admin.faults("""[{"kind": "recordFailure", "operations": ["PutRecords"], "partitionKeys": ["k3"]}]""")
    val e = try intercept[Exception](write(stream, ids(100), "retryMaxAttempts" -> "3", "retryMaxBackoff" -> "200ms"))
      finally simulator.admin.clearFaults()
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(messages.contains(s"could not be written to stream '$stream' after 3 attempts (retryMaxAttempts)"), messages)
    assert(messages.contains("error codes: InternalFailure x"), messages)
  }

  /** PutRecords requests of `stream` that reached the simulator: served, or answered by a fault. */
  private def putRequests(stream: String): Long = {
    val op = simulator.admin.counters().path("streams").path(stream).path("operations").path("PutRecords")
    op.path("calls").asLong() + op.path("faults").asLong()
  }

  /** This JVM's sink sender threads inside a PutRecords call: where the SDK's attempts and retries happen. */
  private def sendersInCall(): Seq[String] = Thread.getAllStackTraces.asScala.collect {
    case (t, stack) if t.getName.startsWith("kinesis-sink-sender") && stack.exists(_.getMethodName == "putRecords") =>
      t.getName
  }.toSeq

  /**
   * One task retries PutRecords without end while the other fails on a poison row: once the job failed and its
   * tasks ended, no PutRecords of theirs is in flight or sent again, and the rows acknowledged before are stored.
   *
   * @param interruptOnCancel whether Spark interrupts the killed task's thread: Spark 4's SQL executions do
   *                          (`spark.sql.execution.interruptOnCancel`), Spark 3.5 only sets the task's kill flag
   */
  private def failedJobStopsSending(interruptOnCancel: Boolean): Unit = {
    val good = newStream()
    val stuck = newStream()
    // Every PutRecords to `stuck` answers 500, which the SDK retries without end (retryMaxAttempts is unlimited by
    // default); `good` answers late, so the other task fails on its poison row while those retries go on.
    simulator.admin.faults(s"""[{"kind": "http500", "operations": ["PutRecords"], "stream": "$stuck"},
      | {"kind": "latency", "operations": ["PutRecords"], "stream": "$good", "latencyMillis": 1500}]""".stripMargin)
    // Partition 0 (ids 0..199) goes to `good`, its last row without data; partition 1 to `stuck`.
    val rows = spark.range(0, 400, 1, 2).select(
      when(spark_partition_id() === 0, lit(good)).otherwise(lit(stuck)).as("stream"),
      concat(lit("k"), (col("id") % 13).cast("string")).as("partitionKey"),
      when(col("id") === 199, lit(null).cast("string")).otherwise(col("id").cast("string")).as("data"))
    spark.conf.set("spark.sql.execution.interruptOnCancel", interruptOnCancel.toString)
    try {
      val e = intercept[Exception](rows.write.format("kinesis").mode(SaveMode.Append).options(Map(
        "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region, "awsAccessKey" -> TestEnv.accessKey,
        "awsSecretKey" -> TestEnv.secretKey, "retryMaxBackoff" -> "200ms")).save())
      val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
      assert(messages.contains(s"cannot write row 200 of this task (partition 0) to stream '$good': data is null"), messages)
      assert(putRequests(stuck) > 0, "the stuck task never sent: the test would prove nothing")
      // Spark kills the job's other task; it must notice (interrupted or not), stop its retries and end.
      Wait.until("the failed job's tasks to end", java.time.Duration.ofSeconds(20)) {
        spark.sparkContext.statusTracker.getExecutorInfos.map(_.numRunningTasks).sum == 0
      }
      val ended = putRequests(stuck)
      // Retries happen inside a sender thread's putRecords call: with none left, nothing more can be sent.
      assert(sendersInCall().isEmpty, s"sender threads still sending after the job failed: ${sendersInCall()}")
      assert(putRequests(stuck) == ended)
    } finally {
      simulator.admin.clearFaults()
      spark.conf.unset("spark.sql.execution.interruptOnCancel")
    }
    assert(stored(good).sorted == (0L until 199L), "the rows before the poison row were acknowledged: all stored")
    assert(stored(stuck).isEmpty)
  }

  test("a failed write job's tasks stop sending: no PutRecords once its tasks ended, acknowledged records all stored") {
    failedJobStopsSending(interruptOnCancel = true)
  }

  test("the same when Spark kills the task without interrupting it (Spark 3.5's way): the waiting task notices") {
    failedJobStopsSending(interruptOnCancel = false)
  }
}
