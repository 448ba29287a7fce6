package io.github.sparkkinesis.it

import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.driver.FetchPlanner

/**
 * The driver can die at any point of a batch. Each test runs a query, rewinds its checkpoint to what a crash at
 * that point leaves behind, puts more records, and restarts: the replayed batch holds exactly what it held
 * before (even though its records are no longer buffered anywhere), and overall nothing is lost or repeated.
 */
class SourceRecoverySuite extends AnyFunSuite with SourceTest {

  private def records(prefix: String, n: Int) = (1 to n).map(i => (s"key-${i % 7}", s"$prefix-$i"))

  private def firstRun(stream: String, checkpoint: String) = {
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, records("first", 40))
    val run = readAvailableNow(reader(stream), checkpoint)
    assertExactly(run.records, put)
    assert(run.batchIds.size >= 3, s"want several batches, got ${run.batchIds}")
    (put, run)
  }

  private def reader(stream: String) =
    kinesisReader(stream, "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "10")

  /** Removes a batch's entry from a checkpoint log, as if the driver died before writing it. */
  private def unwrite(checkpoint: String, kind: String, batch: Long): Unit = {
    Files.delete(Paths.get(checkpoint, kind, batch.toString))
    Files.deleteIfExists(Paths.get(checkpoint, kind, s".$batch.crc")) // Hadoop's local checksum file
  }

  /**
   * Reads a fresh stream in several batches, forgets its last batch from the given checkpoint `logs` (as a crash
   * before writing them leaves it), puts more records, and restarts. Checks nothing is lost or repeated overall;
   * returns the last batch's id and both runs' records.
   */
  private def crashAndRestart(name: String, logs: Seq[String]): (Long, Seq[ReadRecord], Seq[ReadRecord]) = {
    val stream = newStreamName(name)
    val checkpoint = newCheckpoint()
    val (put, first) = firstRun(stream, checkpoint)
    val last = first.batchIds.max
    logs.foreach(unwrite(checkpoint, _, last))
    val more = kinesis.putAll(stream, records("second", 15))
    val second = readAvailableNow(reader(stream), checkpoint)
    assertExactly(first.records.filter(_.batchId < last) ++ second.records, put ++ more)
    (last, first.records, second.records)
  }

  test("killed after the offset log write, before the commit: the batch is replayed identically") {
    val (last, first, second) = crashAndRestart("replay", Seq("commits"))
    assert(second.filter(_.batchId == last) == first.filter(_.batchId == last), "the replayed batch differs from the original")
  }

  test("killed before the offset log write: the batch is planned again and nothing is lost or repeated") {
    crashAndRestart("replan", Seq("commits", "offsets"))
  }

  test("killed before the first batch committed: latest stays pinned where it was") {
    val stream = newStreamName("pin")
    kinesis.createStream(stream, 2)
    val checkpoint = newCheckpoint()
    val before = kinesis.putAll(stream, records("before", 5))
    val pinned = System.currentTimeMillis()
    eventually("the records put so far to be older than latest reaches back") {
      System.currentTimeMillis() > pinned + FetchPlanner.LatestLookBackMillis
    }
    val first = readAvailableNow(kinesisReader(stream), checkpoint)
    assert(first.records.isEmpty, "latest must not read records from before the start")
    val after = kinesis.putAll(stream, records("after", 12))
    // No batch ran, so only the pinned initial offset is in the checkpoint; a restart must use it, not re-pin.
    val second = readAvailableNow(kinesisReader(stream), checkpoint)
    assertExactly(second.records, after)
    assert(!second.records.exists(r => before.exists(_.sequenceNumber == r.sequenceNumber)))
  }
}
