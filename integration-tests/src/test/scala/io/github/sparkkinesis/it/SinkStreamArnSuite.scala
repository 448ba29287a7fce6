package io.github.sparkkinesis.it

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.{GetRecordsRequest, GetShardIteratorRequest, ListShardsRequest, ShardIteratorType}

/**
 * Writes by ARN: the simulator holds a stream of another account that only its ARN reaches (as a resource policy
 * would let a writer do), beside the caller's own stream of the same name, which a write by name would hit.
 */
class SinkStreamArnSuite extends AnyFunSuite with SimulatorSuite with SparkSuite {
  private val OtherAccount = "111122223333"

  private def write(df: DataFrame, target: (String, String)*): Unit =
    df.write.format("kinesis").mode(SaveMode.Append).options(Map(
      "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey) ++ target).save()

  private def ids(n: Int): DataFrame = spark.range(0, n, 1, 2)
    .select(concat(lit("k"), (col("id") % 13).cast("string")).as("partitionKey"), col("id").cast("string").as("data"))

  /** What a stream holds, read by its ARN (by name, another account's stream cannot be found). */
  private def storedByArn(arn: String): Seq[Long] = {
    val client = simulatorKinesis.client
    client.listShards(ListShardsRequest.builder().streamARN(arn).build()).shards().asScala.toSeq.flatMap { shard =>
      var iterator = client.getShardIterator(GetShardIteratorRequest.builder().streamARN(arn)
        .shardId(shard.shardId()).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
      val out = Seq.newBuilder[Long]
      var more = true
      while (more) {
        val answer = client.getRecords(GetRecordsRequest.builder().shardIterator(iterator).build())
        out ++= answer.records().asScala.map(_.data().asUtf8String().toLong)
        iterator = answer.nextShardIterator()
        more = !answer.records().isEmpty && iterator != null
      }
      out.result()
    }
  }

  private def storedByName(stream: String): Seq[Long] =
    StreamContents.read(simulatorKinesis.client, stream).map(_.text.toLong)

  /** The caller's stream and another account's, both named `name`; the other's ARN. */
  private def twoStreams(prefix: String): (String, String) = {
    val name = TestKinesis.freshName(prefix)
    simulatorKinesis.createStream(name, 2)
    (name, simulator.admin.createStreamInAccount(OtherAccount, name, 2))
  }

  test("streamARN of another account's stream: every record goes there, none to the caller's same-named stream") {
    val (name, theirs) = twoStreams("arn-option")
    write(ids(300), "streamARN" -> theirs)
    assert(storedByArn(theirs).sorted == (0L until 300L))
    assert(storedByName(name).isEmpty, "a write by ARN reached the caller's stream of that name")
  }

  test("an ARN in the stream column is written by ARN, a name by name, row by row") {
    val (name, theirs) = twoStreams("arn-column")
    val routed = ids(200).withColumn("stream", when(col("data").cast("long") % 2 === 0, lit(theirs)).otherwise(lit(name)))
    write(routed)
    assert(storedByArn(theirs).sorted == (0L until 200L by 2))
    assert(storedByName(name).sorted == (1L until 200L by 2))
  }

  test("aggregated writes by ARN, read back by ARN with the source: each row once, nothing in the caller's stream") {
    val (name, theirs) = twoStreams("arn-kpl")
    write(ids(100), "streamARN" -> theirs, "aggregation" -> "kpl")
    assert(storedByName(name).isEmpty)
    val read = spark.read.format("kinesis").options(Map(
      "streamARN" -> theirs, "endpoint" -> simulator.endpoint.toString, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey)).load()
      .select(col("data").cast("string").cast("long")).collect().map(_.getLong(0)).toSeq
    assert(read.sorted == (0L until 100L))
  }

  test("a stream ARN that names no stream fails the write naming that ARN") {
    val missing = s"arn:aws:kinesis:${TestEnv.region}:444455556666:stream/${TestKinesis.freshName("arn-missing")}"
    val e = intercept[Exception](write(ids(10), "streamARN" -> missing))
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")
    assert(messages.contains(s"Kinesis stream '$missing' not found"), messages)
  }
}
