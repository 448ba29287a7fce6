package io.github.sparkkinesis.sink

import java.time.Duration

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.client.{RetryBackoff, RetryConfig}
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry
import io.github.sparkkinesis.sink.executor.{PendingRecord, PutRecordsOutcome}

/** Every way a PutRecords response can end for its records: stored, resent, or the write fails with the SPEC message. */
class PutRecordsOutcomeSuite extends AnyFunSuite {
  private val Throttled = "ProvisionedThroughputExceededException"

  private def batch(n: Int, attempts: Int = 1) = (0 until n).map { i =>
    val r = new PendingRecord(
      PutRecordsRequestEntry.builder().partitionKey(s"k$i")
        .data(SdkBytes.fromUtf8String(s"$i")).build(),
      s"k$i",
      10 + i)
    r.attempts = attempts
    r
  }.asJava

  private def backoff(maxAttempts: Option[Int]) =
    new RetryBackoff(RetryConfig(maxAttempts, Duration.ofMillis(100), Duration.ofSeconds(3)))

  test("a clean response stores everything") {
    val o = PutRecordsOutcome.of(batch(3), _ => null, backoff(None))
    assert(o.stored == 3 && o.storedBytes == 10 + 11 + 12 && o.throttled == 0 && o.failed == null)
    assert(o.error("s", backoff(None)).isEmpty)
  }

  test("only failed records are resent, in request order; throttling and internal failures both retry") {
    val codes = Seq(null, Throttled, null, "InternalFailure", Throttled)
    val o = PutRecordsOutcome.of(batch(5), codes, backoff(None))
    assert(o.stored == 2 && o.throttled == 2)
    assert(o.failed.asScala.map(_.partitionKey) == Seq("k1", "k3", "k4"))
    assert(o.error("s", backoff(None)).isEmpty, "unlimited attempts never give up")
  }

  test("a record that used up retryMaxAttempts fails the write with stream, codes, count and attempts") {
    val codes = Seq(Throttled, Throttled, "InternalFailure", null)
    val o = PutRecordsOutcome.of(batch(4, attempts = 5), codes, backoff(Some(5)))
    val e = o.error("orders", backoff(Some(5))).get
    assert(
      e.getMessage == "Kinesis sink: 3 record(s) could not be written to stream 'orders' after 5 attempts " +
        s"(retryMaxAttempts); error codes: $Throttled x2, InternalFailure x1",
      e.getMessage
    )
  }

  test("records with attempts left are resent even when the cap is set") {
    val o = PutRecordsOutcome.of(batch(2, attempts = 4), _ => Throttled, backoff(Some(5)))
    assert(o.error("s", backoff(Some(5))).isEmpty && o.failed.size == 2)
  }

  test("a code no retry can fix fails at once, naming it") {
    val o = PutRecordsOutcome.of(batch(2), Seq("InvalidArgumentException", null), backoff(None))
    val e = o.error("s", backoff(None)).get
    assert(e.getMessage.contains("with an error no retry can fix; error codes: InvalidArgumentException x1"))
  }
}
