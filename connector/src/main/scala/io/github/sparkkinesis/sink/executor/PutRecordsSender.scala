package io.github.sparkkinesis.sink
package executor

import java.time.Duration
import java.util
import java.util.concurrent.{ExecutorService, RejectedExecutionException, TimeUnit}

import io.github.sparkkinesis.DaemonThreads
import software.amazon.awssdk.core.exception.AbortedException
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{PutRecordsRequest, PutRecordsResponse}

/**
 * How one writer task's PutRecords requests leave: each on a sender thread through the SDK's synchronous client
 * (Apache HttpClient 5), its outcome handed back to `done`. Quotas off on the simulator, the async (Netty) client
 * spent about a third more CPU per 1 KiB record on the same requests and wrote slower; and a sender thread
 * marshals and signs its request beside the task's thread, which goes on turning rows into records meanwhile.
 *
 * [[stop]] is what Spark's abort of the task comes to: a request not yet begun is never sent, and a call under way
 * is interrupted. The SDK's retry strategy is the source's too, so it is stopped from outside rather than given a
 * second policy: the SDK checks the thread's interrupt before each attempt and sleeps its backoff interruptibly,
 * so an interrupted call makes no further attempt (AbortedException). An attempt already on the wire cannot be
 * recalled; `stop` waits for it, at most its bound.
 *
 * Each writer bounds its own requests in flight (`maxInFlightRequests` per stream), so the pool has no bound of
 * its own; its threads end after a minute without work.
 */
private[sink] final class PutRecordsSender(client: KinesisClient) {
  import PutRecordsSender._

  // Guarded by `this`: the sender threads inside a call (so `stop` interrupts only those), the calls handed to the
  // pool and not ended, and whether the task stopped sending.
  private val calling = new util.HashSet[Thread]()
  private var pending = 0
  private var stopped = false

  /** Sends on a sender thread; `done` gets the response or the failure (the SDK's retries have happened). */
  def send(request: PutRecordsRequest, done: (PutRecordsResponse, Throwable) => Unit): Unit = {
    synchronized(pending += 1)
    try pool.execute(() => call(request, done))
    catch {
      case e: RejectedExecutionException =>
        ended()
        done(null, e)
    }
  }

  private def call(request: PutRecordsRequest, done: (PutRecordsResponse, Throwable) => Unit): Unit = {
    val me = Thread.currentThread()
    val go = synchronized {
      if (!stopped) calling.add(me)
      !stopped
    }
    var response: PutRecordsResponse = null
    var error: Throwable = null
    if (!go) error = AbortedException.create("the write task was aborted before this PutRecords request was sent")
    else {
      try response = client.putRecords(request)
      catch { case e: Throwable => error = abortedAs(e) }
      finally leave(me)
    }
    ended()
    done(response, error)
  }

  /**
   * A call that `stop` interrupted ends as an AbortedException wherever the interrupt landed: in the SDK's backoff
   * or between its attempts the SDK says so itself, but in Apache HttpClient's wait for a pooled connection the
   * SDK passes on a bare CancellationException (seen once in a test run).
   */
  private def abortedAs(e: Throwable): Throwable = {
    val aborted = synchronized(stopped)
    val causes = Iterator.iterate(e)(_.getCause).takeWhile(_ != null)
    if (!aborted || causes.exists(_.isInstanceOf[AbortedException])) e
    else AbortedException.builder().message("the write task was aborted during this PutRecords call").cause(e).build()
  }

  private def leave(me: Thread): Unit = synchronized {
    calling.remove(me)
    // An interrupt from stop() must not outlive this call: the pool's thread serves other tasks next.
    Thread.interrupted()
  }

  private def ended(): Unit = synchronized {
    pending -= 1
    if (pending == 0) notifyAll()
  }

  /**
   * Stops this task's sending: no request not yet begun is sent, the SDK makes no further attempt of a call under
   * way, and waits up to `bound` for attempts already on the wire. Returns how many calls had not ended by then.
   */
  def stop(bound: Duration): Int = synchronized {
    stopped = true
    calling.forEach(_.interrupt())
    val deadline = System.nanoTime() + bound.toNanos
    var left = deadline - System.nanoTime()
    while (pending > 0 && left > 0) {
      TimeUnit.NANOSECONDS.timedWait(this, left)
      left = deadline - System.nanoTime()
    }
    pending
  }

  /** Calls handed to the pool and not ended. */
  def inFlight: Int = synchronized(pending)
}

private[sink] object PutRecordsSender {
  private lazy val pool: ExecutorService = DaemonThreads.cachedPool("kinesis-sink-sender")
}
