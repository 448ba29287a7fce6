package io.github.sparkkinesis.it

import org.apache.spark.sql.streaming.{StreamingQueryException, Trigger}
import org.scalatest.funsuite.AnyFunSuite

/** What users see when something is wrong: SPEC §5's messages, before the query starts where possible. */
class SourceErrorsSuite extends AnyFunSuite with SourceTest {

  private def startError(stream: String, options: (String, String)*): String =
    startError(stream, Trigger.AvailableNow(), options: _*)

  private def startError(stream: String, trigger: Trigger, options: (String, String)*): String = {
    val e = intercept[Exception] {
      val q = new Collector().start(kinesisReader(stream, options: _*), newCheckpoint(), trigger)
      q.awaitTermination(120000)
    }
    val root = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).toSeq
    root.map(_.getMessage).mkString(" | ")
  }

  test("a stream that does not exist fails with the stream, the region and the endpoint") {
    val msg = startError("no-such-stream")
    assert(msg.contains(s"Kinesis stream 'no-such-stream' not found in region ${TestEnv.region} (endpoint ${emulator.endpoint})"), msg)
  }

  test("the wrong region is a missing stream there, named with the region") {
    val stream = newStreamName("region")
    kinesis.createStream(stream, 1)
    val msg = startError(stream, "region" -> "eu-west-3")
    assert(msg.contains(s"Kinesis stream '$stream' not found in region eu-west-3"), msg)
  }

  test("bad option values fail when the DataFrame is defined, naming option, value and what is accepted") {
    val stream = newStreamName("opts")
    kinesis.createStream(stream, 1)
    def loadError(options: (String, String)*) = intercept[IllegalArgumentException](kinesisReader(stream, options: _*)).getMessage
    assert(loadError("initialPosition" -> "yesterday").startsWith("Invalid value 'yesterday' for option 'initialPosition': expected latest, trim_horizon"))
    assert(loadError("maxRecordsPerFetch" -> "20000") == "Invalid value '20000' for option 'maxRecordsPerFetch': expected an integer in 1..10000.")
    assert(loadError("minFetchPeriod" -> "50ms").contains("at least 200ms"))
    assert(loadError("initialPosition" -> "at_timestamp") .contains("Option 'initialTimestamp' is required"))
    assert(loadError("intialPosition" -> "latest").contains("did you mean 'initialPosition'"))
    assert(loadError("consumerName" -> "app").contains("'consumerName' applies only with consumerMode=efo"))
    assert(loadError("consumerMode" -> "efo", "registeredConsumerId" -> "app").contains("expected consumer ARNs"))
  }

  test("Databricks options that cannot work here are refused, naming option, value and what to use instead") {
    val stream = newStreamName("dbx")
    kinesis.createStream(stream, 1)
    val credential = intercept[IllegalArgumentException](kinesisReader(stream, "serviceCredential" -> "kinesis-cred")).getMessage
    assert(credential.startsWith("Option 'serviceCredential' (value 'kinesis-cred') is Databricks' and not supported " +
      "here") && credential.contains("give roleArn"), credential)
    val batchEnd = intercept[IllegalArgumentException](spark.read.format("kinesis").options(Map("streamName" -> stream,
      "endpoint" -> emulator.endpoint.toString, "region" -> TestEnv.region, "awsAccessKey" -> TestEnv.accessKey,
      "awsSecretKey" -> TestEnv.secretKey, "endingPosition" -> "trim_horizon")).load().collect()).getMessage
    assert(batchEnd.startsWith("Invalid value 'trim_horizon' for option 'endingPosition': expected latest"), batchEnd)
    val streamingEnd = startError(stream, Trigger.ProcessingTime("1 second"), "endingPosition" -> "latest")
    assert(streamingEnd.contains("Option 'endingPosition' (value 'latest') bounds batch reads and Trigger.AvailableNow"),
      streamingEnd)
  }

  test("a checkpoint written for another stream is refused with what was expected and found") {
    val one = newStreamName("one")
    val two = newStreamName("two")
    kinesis.createStream(one, 1)
    kinesis.createStream(two, 1)
    kinesis.putAll(one, Seq("k" -> "v"))
    val checkpoint = newCheckpoint()
    readAvailableNow(kinesisReader(one, "initialPosition" -> "trim_horizon"), checkpoint)
    val e = intercept[StreamingQueryException](readAvailableNow(kinesisReader(two), checkpoint))
    assert(e.getMessage.contains(s"The checkpoint was written for Kinesis streams $one but the query reads $two"), e.getMessage)
  }
}

/** A checkpointed position that no longer exists (here: the stream was deleted and created again). */
class SourceDataLossSuite extends AnyFunSuite with SourceTest {

  private def recreated(): (String, String, Seq[PutRecordResult]) = {
    val stream = newStreamName("lost")
    kinesis.createStream(stream, 1)
    kinesis.putAll(stream, (1 to 5).map(i => ("k", s"old-$i")))
    val checkpoint = newCheckpoint()
    assert(readAvailableNow(kinesisReader(stream, "initialPosition" -> "trim_horizon"), checkpoint).records.size == 5)
    kinesis.client.deleteStream(software.amazon.awssdk.services.kinesis.model.DeleteStreamRequest.builder()
      .streamName(stream).build())
    eventually("the stream to be gone") { !kinesis.client.listStreams().streamNames().contains(stream) }
    kinesis.createStream(stream, 1)
    (stream, checkpoint, kinesis.putAll(stream, (1 to 3).map(i => ("k", s"new-$i"))))
  }

  test("failOnDataLoss=true (the default) fails naming the shard and the position") {
    val (stream, checkpoint, _) = recreated()
    val e = intercept[StreamingQueryException](readAvailableNow(kinesisReader(stream), checkpoint))
    assert(e.getMessage.contains(s"Data loss in Kinesis stream '$stream', shard shardId-000000000000: position " +
      "after sequence number "), e.getMessage)
    assert(e.getMessage.contains("Set failOnDataLoss=false"), e.getMessage)
  }

  test("failOnDataLoss=false warns and goes on from the oldest record") {
    val (stream, checkpoint, fresh) = recreated()
    val read = readAvailableNow(kinesisReader(stream, "failOnDataLoss" -> "false"), checkpoint).records
    assertExactly(read, fresh)
  }
}
