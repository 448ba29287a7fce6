package io.github.sparkkinesis.it

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.time.Duration

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.it.tools.CheckpointFixtures
import io.github.sparkkinesis.it.tools.CheckpointFixtures.{CheckpointLog, Fixture, Script}
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryException, Trigger}
import org.scalatest.exceptions.TestFailedException
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.{DescribeStreamSummaryRequest, ListStreamConsumersRequest}

/**
 * A query's checkpoint must survive upgrading the connector, as Spark's Kafka source tests its old offset formats.
 * Each fixture under resources/checkpoints is a checkpoint an earlier version of the connector wrote, kept as it
 * wrote it (tools.CheckpointFixtures; never regenerated). A test makes the fixture's stream again on a fresh
 * simulator (its script replayed: same shard ids, same sequence numbers), resumes the query from a copy of the
 * checkpoint with the current code, and checks what it reads next: exactly the records after the checkpointed
 * positions, none twice, each shard in order, then the records put after it resumed.
 *
 * Each fixture gets a simulator of its own: sequence numbers come from one counter per server, so a stream made
 * again on a server that other tests used would be numbered differently from the one the checkpoint names.
 */
class CheckpointCompatibilitySuite extends AnyFunSuite with SimulatorSourceTest {
  import CheckpointCompatibilitySuite.Resumed

  private val Timeout = Duration.ofMinutes(2)

  /** A fixture's folder: the checkpoint as Spark wrote it, and fixture.json. */
  private def fixtureDir(name: String): Path = {
    val url = getClass.getResource(s"/checkpoints/$name/${CheckpointFixtures.FileName}")
    assert(url != null && url.getProtocol == "file", s"fixture $name not found as a folder on the test classpath")
    Paths.get(url.toURI).getParent
  }

  /** A copy of a fixture's checkpoint, since the resumed query writes into it. */
  private def checkpointOf(dir: Path): Path = {
    val copy = TempDirs.create(s"ckpt-${dir.getFileName}-")
    CheckpointFixtures.copyCheckpoint(dir, copy)
    copy
  }

  private def onFreshSimulator[T](fixture: Fixture)(body: (KinesisSimulator, TestKinesis) => T): T = {
    val fresh = KinesisSimulator.start()
    val client = new TestKinesis(fresh.endpoint)
    try {
      new Script(client, fresh.endpoint.toString).replay(fixture.steps)
      body(fresh, client)
    } finally {
      client.close()
      fresh.close()
    }
  }

  private def resumedReader(fixture: Fixture, endpoint: String) =
    kinesisReader(fixture.options("streamName"), (fixture.options - "streamName" + ("endpoint" -> endpoint)).toSeq: _*)

  /**
   * Resumes a fixture's query with a processing-time trigger: it reads the records after the checkpoint, then ten
   * records per stream put once those are read. Checks every record once, per shard in order (sub-records too).
   */
  private def resume(name: String): Resumed = {
    val dir = fixtureDir(name)
    val fixture = CheckpointFixtures.read(dir)
    onFreshSimulator(fixture) { (fresh, client) =>
      val checkpoint = checkpointOf(dir)
      val lastCommitted = CheckpointLog.batches(checkpoint, "commits").lastOption.getOrElse(-1L)
      val lastLogged = CheckpointLog.batches(checkpoint, "offsets").lastOption.getOrElse(-1L)
      val readBefore = fixture.read.filter(_._1 <= lastCommitted).values.flatten.toSet
      val remaining = CheckpointFixtures.userRecords(fixture.steps).filterNot(r => readBefore(r.data))
      assert(remaining.nonEmpty, s"$name: the checkpoint should leave records to read")
      val collector = new Collector
      val query = collector.start(resumedReader(fixture, fresh.endpoint.toString), checkpoint.toString,
        Trigger.ProcessingTime(100))
      try {
        waitFor(query, collector, remaining, "the records after the checkpoint")
        val live = fixture.streams.flatMap { s =>
          client.putAll(s, (1 to 10).map(i => (s"key-${i % 5}", f"live-$s-$i%02d")))
        }
        waitFor(query, collector, remaining ++ live, "the records put after resuming")
        query.processAllAvailable()
        val read = collector.records
        assertExactly(read, remaining ++ live)
        assertSubRecordOrder(read)
        Resumed(fixture, checkpoint, lastCommitted, lastLogged, read, remaining, live,
          fresh.admin.operationCounter("GetRecords", "calls"), consumerNames(client, fixture.streams))
      } finally query.stop()
    }
  }

  /** Waits until as many records as expected were read; on a timeout, names the records missing. */
  private def waitFor(query: StreamingQuery, collector: Collector, expected: Seq[PutRecordResult], what: String): Unit =
    try eventually(what, Timeout) {
      query.exception.foreach(e => fail(s"the resumed query failed while waiting for $what", e))
      collector.records.size >= expected.size
    } catch {
      case timeout: TestFailedException if query.exception.isEmpty =>
        assertExactly(collector.records, expected)
        throw timeout
    }

  /** assertExactly orders by sequence number; inside an aggregate, sub-records must come in order too. */
  private def assertSubRecordOrder(read: Seq[ReadRecord]): Unit =
    for ((shard, rs) <- read.groupBy(r => (r.stream, r.shardId))) {
      val positions = rs.sortBy(_.batchId).map(r => (BigInt(r.sequenceNumber), r.subSequenceNumber))
      assert(positions == positions.sorted, s"shard $shard read out of order: $positions")
    }

  private def consumerNames(client: TestKinesis, streams: Seq[String]): Seq[String] = streams.flatMap { s =>
    val arn = client.control.describeStreamSummary(DescribeStreamSummaryRequest.builder().streamName(s).build())
      .streamDescriptionSummary().streamARN()
    client.control.listStreamConsumers(ListStreamConsumersRequest.builder().streamARN(arn).build()).consumers()
      .asScala.map(_.consumerName())
  }

  /** The position of one shard in the last batch the checkpoint logged. */
  private def position(r: Resumed, stream: String, shard: String) =
    CheckpointLog.positions(r.checkpoint, r.lastLogged).get((stream, shard))

  private def queryId(checkpoint: Path): String = {
    val metadata = new String(Files.readAllBytes(checkpoint.resolve("metadata")), UTF_8)
    """"id"\s*:\s*"([^"]+)"""".r.findFirstMatchIn(metadata).map(_.group(1)).getOrElse(fail(s"no id in $metadata"))
  }

  test("v1-polling: two shards resumed mid-stream, from the next record of each, then records put after") {
    val r = resume("v1-polling")
    assert(r.firstBatch == r.lastCommitted + 1, "the resumed query runs the batch after the last committed one")
    for (shard <- Seq("shardId-000000000000", "shardId-000000000001")) {
      assert(position(r, "ckpt-polling", shard).exists(_.has("after")), s"the fixture has $shard mid-stream")
      assert(r.remaining.exists(_.shardId == shard), s"$shard has records after the checkpoint")
    }
  }

  test("v1-split: a parent at shard_end is not read again; its children are read from their start") {
    val r = resume("v1-split")
    assert(position(r, "ckpt-split", "shardId-000000000000").exists(_.path("shard_end").asBoolean(false)))
    assert(!r.read.exists(_.shardId == "shardId-000000000000"), "the closed parent was read again")
    assert(r.read.map(_.shardId).toSet == Set("shardId-000000000001", "shardId-000000000002"))
  }

  test("v1-kpl: a position inside a KPL aggregate resumes at the sub-record after it") {
    val r = resume("v1-kpl")
    val stopped = position(r, "ckpt-kpl", "shardId-000000000000").get
    val (seq, sub) = (stopped.get("after").asText(), stopped.get("sub").asLong())
    assert(sub > 0, s"the fixture stopped inside an aggregate: $stopped")
    assert(r.read.filter(_.sequenceNumber == seq).map(_.subSequenceNumber) == (sub + 1 until 6),
      "the rest of the aggregate, from the sub-record after the checkpoint's")
  }

  test("v1-two-streams: a checkpoint of two streams resumes both, each shard where it was") {
    val r = resume("v1-two-streams")
    assert(r.read.map(_.stream).toSet == Set("ckpt-two-a", "ckpt-two-b"))
    assert(r.remaining.exists(_.data.startsWith("a-")) && r.remaining.exists(_.data.startsWith("b-")))
  }

  test("v1-efo: an enhanced fan-out checkpoint resumes through the query's consumer, without GetRecords") {
    val r = resume("v1-efo")
    assert(r.getRecordsCalls == 0, "an enhanced fan-out query called GetRecords")
    assert(r.consumers == Seq(s"spark-kinesis_${queryId(r.checkpoint)}"), "the consumer is named after the " +
      "checkpoint's query id")
  }

  test("v1-uncommitted: a batch logged but not committed runs again over the same range, then the query goes on") {
    val r = resume("v1-uncommitted")
    assert(r.lastLogged == r.lastCommitted + 1, "the fixture's last batch is logged, not committed")
    assert(r.firstBatch == r.lastLogged, "the uncommitted batch runs again, under its id")
    assert(r.batch(r.lastLogged).map(_.data).sorted == r.fixture.read(r.lastLogged).sorted,
      "the batch run again holds what it held when it was planned")
  }

  test("v1-latest-uncommitted-first: batch 0 starts at the latest pinned when the query first started") {
    val r = resume("v1-latest-uncommitted-first")
    assert(r.lastCommitted == -1 && r.lastLogged == 0)
    assert(Files.exists(r.checkpoint.resolve("sources/0/kinesis-initial-offset.json")))
    // The replayed records arrived long after the pin, so all of them are read, as they were in the original run.
    assert(r.remaining.size == CheckpointFixtures.userRecords(r.fixture.steps).size)
    assert(r.firstBatch == 0 && r.batch(0).map(_.data).sorted == r.fixture.read(0).sorted)
  }

  /** Starts the query of a fixture on a checkpoint edited by `edit`, and returns the messages of its failure. */
  private def failure(name: String)(edit: Path => Unit): String = {
    val dir = fixtureDir(name)
    val fixture = CheckpointFixtures.read(dir)
    // The offset is refused before any shard is read: the suite's simulator with the stream is enough.
    fixture.steps.collect { case c: CheckpointFixtures.Create => kinesis.createStream(c.stream, c.shards) }
    val checkpoint = checkpointOf(dir)
    edit(checkpoint)
    val query = new Collector().start(resumedReader(fixture, simulator.endpoint.toString), checkpoint.toString,
      Trigger.ProcessingTime(100))
    try {
      val e = intercept[StreamingQueryException](query.awaitTermination(Timeout.toMillis))
      Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    } finally query.stop()
  }

  private def toVersion2(file: Path): Unit = {
    val lines = Files.readAllLines(file, UTF_8).asScala
    assert(lines.last.contains("\"version\":1"), s"$file: ${lines.last}")
    val edited = lines.init :+ lines.last.replace("\"version\":1", "\"version\":2")
    Files.write(file, edited.mkString("\n").getBytes(UTF_8))
  }

  private val newerVersion = "This Kinesis source checkpoint was written by a newer version of spark-kinesis: its " +
    "offset is version 2, and this connector reads offset versions up to 1."

  test("a checkpoint written by a newer version (offset version 2) fails, naming the version found and the one read") {
    val message = failure("v1-polling") { checkpoint =>
      toVersion2(checkpoint.resolve("offsets").resolve(CheckpointLog.batches(checkpoint, "offsets").last.toString))
    }
    assert(message.contains(newerVersion), message)
    assert(message.contains("start it on a new checkpoint location"), message)
  }

  test("a pinned start written by a newer version (no batch logged yet) fails the same way") {
    val message = failure("v1-latest-uncommitted-first") { checkpoint =>
      CheckpointLog.batches(checkpoint, "offsets").foreach(b => Files.delete(checkpoint.resolve(s"offsets/$b")))
      toVersion2(checkpoint.resolve("sources/0/kinesis-initial-offset.json"))
    }
    assert(message.contains(newerVersion), message)
  }
}

object CheckpointCompatibilitySuite {
  /** What a resumed query read, and what the fixture says it should. */
  private final case class Resumed(fixture: Fixture, checkpoint: Path, lastCommitted: Long, lastLogged: Long,
      read: Seq[ReadRecord], remaining: Seq[PutRecordResult], live: Seq[PutRecordResult], getRecordsCalls: Long,
      consumers: Seq[String]) {
    def firstBatch: Long = read.map(_.batchId).min
    def batch(id: Long): Seq[ReadRecord] = read.filter(_.batchId == id)
  }
}
