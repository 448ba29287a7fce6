package io.github.sparkkinesis.it

import java.time.Duration
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streaming.Trigger
import org.scalatest.funsuite.AnyFunSuite

/**
 * Jobs written as the AWS Labs, Qubole and Databricks connectors' documentation writes them (their keys, format
 * names and columns), run unchanged against the simulator: they read and write what they would there, or fail before
 * the query starts naming the key (SPEC §2, docs/migrating.md).
 */
class MigrationJobsSuite extends AnyFunSuite with SimulatorSourceTest {
  private def keyed(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 5}", f"$prefix-$i%03d"))

  /** Rows of a query as `(batchId, selected columns)`, whatever the source's layout. */
  private def runAvailableNow(df: DataFrame): Seq[(Long, Row)] = {
    val rows = new ConcurrentLinkedQueue[(Long, Row)]()
    val query = df.writeStream.option("checkpointLocation", newCheckpoint()).trigger(Trigger.AvailableNow())
      .foreachBatch((batch: DataFrame, id: Long) => batch.collect().foreach(r => rows.add(id -> r))).start()
    assert(query.awaitTermination(Duration.ofMinutes(2).toMillis), "the AvailableNow query did not stop")
    query.exception.foreach(e => throw e)
    rows.asScala.toSeq
  }

  test("an AWS Labs job: format aws-kinesis, kinesis.* keys, its columns; its sink with aggregation") {
    val stream = newStreamName("awslabs")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, keyed("labs", 30))
    val kinesisDf = spark.readStream
      .format("aws-kinesis")
      .option("kinesis.region", TestEnv.region)
      .option("kinesis.streamName", stream)
      .option("kinesis.consumerType", "GetRecords")
      .option("kinesis.endpointUrl", endpoint.toString)
      .option("kinesis.startingposition", "TRIM_HORIZON")
      .option("kinesis.awsAccessKeyId", TestEnv.accessKey)
      .option("kinesis.awsSecretKey", TestEnv.secretKey)
      .option("kinesis.maxFetchRecordsPerShard", "4")
      .load()
    assert(kinesisDf.columns.toSeq == Seq("data", "streamName", "partitionKey", "sequenceNumber", "approximateArrivalTimestamp"))
    val rows = runAvailableNow(kinesisDf.selectExpr("CAST(data AS STRING)", "streamName", "partitionKey", "sequenceNumber"))
    assert(rows.map(_._2.getString(0)).sorted == put.indices.map(i => f"labs-${i + 1}%03d"))
    assert(rows.forall(_._2.getString(1) == stream))
    // kinesis.maxFetchRecordsPerShard: at most 4 records of a shard in a batch, so 30 records take 4+ batches.
    assert(rows.groupBy(_._1).values.forall(_.size <= 8) && rows.map(_._1).distinct.size >= 4, rows.groupBy(_._1).view.mapValues(_.size).toMap)

    // Its sink example: partitionKey and data columns, kinesis.* keys, aggregation on.
    val target = newStreamName("awslabs-sink")
    kinesis.createStream(target, 2)
    spark.range(0, 50, 1, 2).selectExpr("CAST(id % 7 AS STRING) AS partitionKey", "CONCAT('row-', id) AS data")
      .write.format("aws-kinesis").mode("append")
      .option("kinesis.region", TestEnv.region)
      .option("kinesis.streamName", target)
      .option("kinesis.endpointUrl", endpoint.toString)
      .option("kinesis.awsAccessKeyId", TestEnv.accessKey)
      .option("kinesis.awsSecretKey", TestEnv.secretKey)
      .option("kinesis.sink.aggregationEnabled", "true")
      .save()
    val back = readAvailableNow(kinesisReader(target, "initialPosition" -> "trim_horizon")).records
    assert(back.map(_.data).sorted == (0 until 50).map(i => s"row-$i").sorted)
    assert(back.exists(_.subSequenceNumber > 0), "aggregationEnabled=true wrote no KPL aggregate")
  }

  test("a Qubole job: format kinesis, its keys (startingposition, endpointUrl, kinesis.executor.*), its sink") {
    val stream = newStreamName("qubole")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, keyed("qubole", 20))
    val kinesisDf = spark.readStream
      .format("kinesis")
      .option("streamName", stream)
      .option("endpointUrl", endpoint.toString)
      .option("awsAccessKeyId", TestEnv.accessKey)
      .option("awsSecretKey", TestEnv.secretKey)
      .option("startingposition", "TRIM_HORIZON")
      .option("kinesis.executor.maxRecordPerRead", "3")
      .option("kinesis.client.numRetries", "3")
      .load()
    val rows = runAvailableNow(kinesisDf.selectExpr("CAST(data AS STRING)", "partitionKey"))
    assert(rows.map(_._2.getString(0)).sorted == put.indices.map(i => f"qubole-${i + 1}%03d"))

    val target = newStreamName("qubole-sink")
    kinesis.createStream(target, 1)
    spark.range(0, 10, 1, 1).selectExpr("CAST(id AS STRING) AS partitionKey", "CONCAT('q-', id) AS data")
      .write.format("kinesis").mode("append")
      .option("streamName", target)
      .option("endpointUrl", endpoint.toString)
      .option("awsAccessKeyId", TestEnv.accessKey)
      .option("awsSecretKey", TestEnv.secretKey)
      .option("kinesis.executor.aggregationEnabled", "false")
      .save()
    val back = readAvailableNow(kinesisReader(target, "initialPosition" -> "trim_horizon")).records
    assert(back.map(_.data).sorted == (0 until 10).map(i => s"q-$i").sorted && back.forall(_.subSequenceNumber == 0))
  }

  test("a Databricks job: its keys, its JSON at_timestamp start, its columns") {
    val stream = newStreamName("databricks")
    kinesis.createStream(stream, 1)
    val old = kinesis.putAll(stream, keyed("old", 5))
    val put = kinesis.putAll(stream, keyed("new", 5))
    val from = arrival(stream, put.head) // on the simulator's clock: start at the first "new" record
    val df = spark.readStream.format("kinesis")
      .option("streamName", stream)
      .option("region", TestEnv.region)
      .option("endpoint", endpoint.toString)
      .option("awsAccessKey", TestEnv.accessKey)
      .option("awsSecretKey", TestEnv.secretKey)
      .option("initialPosition", s"""{"at_timestamp": "${from.toEpochMilli}"}""")
      .option("maxFetchDuration", "10s")
      .option("shardsPerTask", "5")
      .load()
    val rows = runAvailableNow(df.select(col("partitionKey"), col("data").cast("string"), col("stream")))
    val read = rows.map(_._2.getString(1)).sorted
    // An old record that arrived in the same millisecond as the first new one is rightly read too.
    val sameMillisecond = old.filter(r => arrival(stream, r) == from).map(_.data)
    assert(read == (keyed("new", 5).map(_._2) ++ sameMillisecond).sorted)
    assert(rows.forall(_._2.getString(2) == stream))
  }

  private def arrival(stream: String, r: PutRecordResult): java.time.Instant = {
    import software.amazon.awssdk.services.kinesis.model.{GetRecordsRequest, GetShardIteratorRequest}
    val iterator = kinesis.client.getShardIterator(GetShardIteratorRequest.builder().streamName(stream)
      .shardId(r.shardId).shardIteratorType("AT_SEQUENCE_NUMBER").startingSequenceNumber(r.sequenceNumber).build())
    kinesis.client.getRecords(GetRecordsRequest.builder().shardIterator(iterator.shardIterator()).limit(1).build())
      .records().get(0).approximateArrivalTimestamp()
  }

  test("a job with a key of theirs that cannot work, or one no connector has, fails before its query starts") {
    val stream = newStreamName("refused")
    kinesis.createStream(stream, 1)
    def load(kv: (String, String)*) = intercept[IllegalArgumentException](kinesisReader(stream, kv: _*)).getMessage
    assert(load("kinesis.credentialProviderClass" -> "com.example.Provider")
      .startsWith("Option 'kinesis.credentialProviderClass' is the AWS Labs connector's and not supported here"))
    assert(load("kinesis.executor.prefetch" -> "true").startsWith("Unknown option 'kinesis.executor.prefetch'"))
    assert(load("kinesis.startingPosition" -> "TRIM_HORIZON", "initialPosition" -> "latest")
      .contains("say different things: keep one"))
  }
}
