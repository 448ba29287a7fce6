package io.github.sparkkinesis.sink

import java.net.{ServerSocket, URI}
import java.time.Duration
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicReference

import io.github.sparkkinesis.client._
import io.github.sparkkinesis.sink.executor.PutRecordsSender
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.core.exception.AbortedException
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsRequestEntry, PutRecordsResponse}

/**
 * A task's sends stop when the task is aborted, the SDK's own retries included (#50). The client is the SDK's
 * real one; the endpoint is a closed port, whose refused connections the retry strategy retries without end.
 */
class PutRecordsSenderSuite extends AnyFunSuite {
  private val closedPort = {
    val s = new ServerSocket(0);
    try s.getLocalPort
    finally s.close()
  }
  private val connection = ConnectionConfig(
    Some("us-east-1"),
    Some(URI.create(s"http://127.0.0.1:$closedPort")),
    CredentialsConfig.Static("AKIDSENDERSUITE", "secret", None),
    RetryConfig(None, Duration.ofMillis(5), Duration.ofMillis(20)),
    TimeoutConfig.default
  )
  private val request = PutRecordsRequest.builder().streamName("s").records(
    PutRecordsRequestEntry.builder().partitionKey("k").data(SdkBytes.fromUtf8String("x")).build()).build()

  private final class Outcome {
    val error = new AtomicReference[Throwable]()
    val done = new CountDownLatch(1)
    val handler: (PutRecordsResponse, Throwable) => Unit = (_, e) => { error.set(e); done.countDown() }
  }

  test("stop ends a call the SDK keeps retrying (AbortedException); the pool's thread serves the next task uninterrupted") {
    val sender = new PutRecordsSender(KinesisClientFactory.sync(connection))
    val outcome = new Outcome
    sender.send(request, outcome.handler)
    assert(!outcome.done.await(300, TimeUnit.MILLISECONDS), "the call ended on its own: the SDK did not retry")
    assert(sender.stop(Duration.ofSeconds(5)) == 0, "the call was still under way after stop's bound")
    assert(outcome.done.await(1, TimeUnit.SECONDS))
    val causes = Iterator.iterate(outcome.error.get)(_.getCause).takeWhile(_ != null).toSeq
    assert(causes.exists(_.isInstanceOf[AbortedException]), causes)
    assert(sender.inFlight == 0)
    // The idle pool thread takes the next task's call: left interrupted, the SDK would abort it at once.
    val next = new PutRecordsSender(KinesisClientFactory.sync(connection))
    val retried = new Outcome
    next.send(request, retried.handler)
    assert(!retried.done.await(300, TimeUnit.MILLISECONDS), s"the next call ended at once: ${retried.error.get}")
    assert(next.stop(Duration.ofSeconds(5)) == 0)
  }

  test("after stop, a request handed over is never sent: it completes with AbortedException at once") {
    val sender = new PutRecordsSender(KinesisClientFactory.sync(connection))
    assert(sender.stop(Duration.ofSeconds(1)) == 0)
    val outcome = new Outcome
    sender.send(request, outcome.handler)
    assert(outcome.done.await(5, TimeUnit.SECONDS))
    assert(outcome.error.get.isInstanceOf[AbortedException], outcome.error.get)
    assert(outcome.error.get.getMessage.contains("aborted before this PutRecords request was sent"))
  }
}
