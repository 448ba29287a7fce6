package io.github.sparkkinesis.it

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.shaded.software.amazon.awssdk.core.SdkBytes
import io.github.sparkkinesis.shaded.software.amazon.awssdk.services.kinesis.model._
import org.apache.spark.{SparkEnv, TaskContext}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The shaded jar works where it matters: inside a Spark executor task, the relocated SDK builds a client through
 * the connector's factory, creates a stream, puts a record and reads it back.
 */
class ShadedSdkSmokeSuite extends AnyFunSuite with EmulatorSuite with SparkSuite {

  test("an executor task creates a stream, puts a record and reads it back through the shaded SDK") {
    val stream = newStreamName("smoke")
    val config = ConnectionConfig(
      region = Some(TestEnv.region),
      endpoint = Some(emulator.endpoint),
      credentials = CredentialsConfig.Static(TestEnv.accessKey, TestEnv.secretKey, None),
      retry = RetryConfig.default,
      timeouts = TimeoutConfig.default)

    val results = spark.sparkContext.parallelize(Seq(stream), 1).map { name =>
      val client = KinesisClientFactory.sync(config)
      client.createStream(CreateStreamRequest.builder().streamName(name).shardCount(1).build())
      val deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos
      def status = client.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(name).build())
        .streamDescriptionSummary().streamStatus()
      while (status != StreamStatus.ACTIVE) {
        require(System.nanoTime() < deadline, s"stream $name not ACTIVE within 30 s")
        Thread.sleep(50)
      }
      val put = client.putRecord(PutRecordRequest.builder().streamName(name).partitionKey("key-1")
        .data(SdkBytes.fromString("hello from an executor", UTF_8)).build())
      val iterator = client.getShardIterator(GetShardIteratorRequest.builder().streamName(name)
        .shardId(put.shardId()).shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
      val records = client.getRecords(GetRecordsRequest.builder().shardIterator(iterator).build()).records()
      (
        TaskContext.get() != null,
        SparkEnv.get.executorId,
        client.getClass.getName,
        classOf[KinesisClientFactory.type].getProtectionDomain.getCodeSource.getLocation.toString,
        put.sequenceNumber(),
        (0 until records.size()).map(i => (records.get(i).partitionKey(), records.get(i).data().asUtf8String(),
          records.get(i).sequenceNumber()))
      )
    }.collect()

    val (inTask, executorId, clientClass, codeSource, sequenceNumber, read) = results.single
    assert(inTask, "the closure did not run as a Spark task")
    assert(executorId == "driver", "local[2] runs its executor inside the driver JVM")
    assert(clientClass.startsWith("io.github.sparkkinesis.shaded.software.amazon.awssdk."), clientClass)
    assert(codeSource == TestEnv.assemblyJar.toURI.toURL.toString,
      s"connector classes came from $codeSource, not the assembly ${TestEnv.assemblyJar}")
    assert(read == Seq(("key-1", "hello from an executor", sequenceNumber)))

    // The independent test client sees the same record: the stream really is on the emulator.
    assert(kinesis.shardIds(stream).size == 1)
  }

  private implicit class Single[A](xs: Array[A]) {
    def single: A = { assert(xs.length == 1, s"expected one result, got ${xs.length}"); xs.head }
  }
}
