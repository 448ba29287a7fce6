package io.github.sparkkinesis.source
package executor

import java.util.ArrayDeque
import java.util.concurrent.{CompletableFuture, ScheduledExecutorService, TimeUnit}
import java.util.concurrent.atomic.LongAdder

import scala.util.control.NonFatal

import io.github.sparkkinesis.DaemonThreads
import io.github.sparkkinesis.client.{CallTally, RetryBackoff, SdkCallStats}
import io.github.sparkkinesis.source.ShardPosition._
import org.apache.spark.internal.Logging
import org.reactivestreams.{Subscriber, Subscription}
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * The enhanced fan-out read strategy: Kinesis pushes one shard's records to the query's registered consumer over
 * an HTTP/2 subscription (SubscribeToShard), 2 MiB/s per shard for this consumer alone. Each `poll` asks the
 * subscription for one more event (Reactive Streams demand): while the executor's buffer is full no event is
 * asked for, HTTP/2 flow control holds the push back, and nothing is dropped.
 *
 * A subscription ends after 5 minutes, or early (a connection cut, a Kinesis error). The next one starts after
 * the last event's continuation sequence number, which moves on a quiet shard too, so neither a quiet shard nor
 * a resharded one stalls (renewing from a timestamp is how other connectors stalled). Subscribing is spaced a
 * second apart at least (Kinesis allows one SubscribeToShard per second per consumer and shard) and backs off
 * with the retry options while it fails. A subscription this fetcher gave up is cancelled, never left open.
 *
 * Mutable state is guarded by the fetcher's monitor; calls into the SDK and completions of futures are made
 * outside it (either may run the other side's callbacks on the same thread).
 */
final class FanOutFetcher(
    client: KinesisAsyncClient,
    config: SourceConfig,
    key: ShardKey,
    consumerArn: String,
    start: ShardPosition,
    tally: CallTally,
    counts: FanOutTally,
    hashKeys: Option[HashKeySpan])
  extends ShardFetcher with Logging {

  import FanOutFetcher._

  /** After the last record passed on: where a subscription starts when no continuation is known. */
  private var position: ShardPosition = start
  private var continuation: Option[String] = None
  /** The record a subscription AT a sequence number must bring first (see [[ShardReader.checkResumed]]). */
  private var resumeRecord: Option[String] = None
  private var current: Sub = null
  private var waiting: CompletableFuture[Poll] = null
  /** Answers that came while nobody waited (the SDK may deliver one more than asked for, on a renewal). */
  private val ready = new ArrayDeque[Poll]()
  private var subscribeScheduled = false
  private var lastSubscribeNanos = System.nanoTime() - MinSubscribeSpacing.toNanos
  private var failuresInARow = 0
  private var millisBehind = 0L
  private var closed = false
  private val backoff = new RetryBackoff(config.connection.retry)

  override def pushed: Boolean = true

  override def poll(limit: Int): CompletableFuture[Poll] = {
    val answer = new CompletableFuture[Poll]
    val next = synchronized {
      if (!ready.isEmpty) { val p = ready.pollFirst(); () => { answer.complete(p); () } }
      else if (position == ShardEnd) { () => { answer.complete(Poll(RecordBlock.empty, 0, 0, ended = true)); () } }
      else if (closed) { () =>
        { answer.completeExceptionally(new IllegalStateException(s"$key: fetcher closed")); () }
      } else { waiting = answer; demand() }
    }
    next()
    answer
  }

  override def close(): Unit = {
    val open = synchronized { closed = true; val s = current; current = null; Option(s) }
    open.foreach(_.cancel())
  }

  /** Under the monitor: makes sure an event is on its way for a waiting poll; returns what to do outside it. */
  private def demand(): () => Unit =
    if (waiting == null || closed) Noop
    else if (current == null) { scheduleSubscribe(); Noop }
    else current.askOne()

  private def scheduleSubscribe(): Unit = if (!subscribeScheduled) {
    subscribeScheduled = true
    val spacing = lastSubscribeNanos + MinSubscribeSpacing.toNanos - System.nanoTime()
    val retryWait = if (failuresInARow == 0) 0L else backoff.delayBefore(failuresInARow + 1).toNanos
    timer.schedule((() => subscribe()): Runnable, math.max(0L, math.max(spacing, retryWait)), TimeUnit.NANOSECONDS)
  }

  private def subscribe(): Unit = {
    val started = synchronized {
      subscribeScheduled = false
      if (closed || current != null || position == ShardEnd || waiting == null) None
      else {
        val sub = new Sub
        current = sub
        lastSubscribeNanos = System.nanoTime()
        Some(sub -> request())
      }
    }
    started.foreach { case (sub, request) =>
      counts.subscriptions.increment()
      val handler =
        SubscribeToShardResponseHandler.builder().subscriber(() => sub: Subscriber[SubscribeToShardEventStream])
          .onError((e: Throwable) => sub.end(Some(e))).build()
      val call =
        try client.subscribeToShard(request, handler)
        catch { case NonFatal(e) => CompletableFuture.failedFuture[Void](e) }
      sub.call = call
      call.whenComplete((_: Void, e: Throwable) => sub.end(Option(e)))
    }
  }

  /** Under the monitor: where the next subscription starts. */
  private def request(): SubscribeToShardRequest = {
    val start = continuation match {
      case Some(c) => resumeRecord = None; ShardReader.Start(ShardIteratorType.AFTER_SEQUENCE_NUMBER, Some(c), None)
      case None => resumeRecord = ShardReader.resumeRecord(position); ShardReader.startOf(key, position)
    }
    val from = StartingPosition.builder().`type`(start.kind)
    start.sequenceNumber.foreach(from.sequenceNumber)
    start.timestamp.foreach(from.timestamp)
    SubscribeToShardRequest.builder().consumerARN(consumerArn).shardId(key.shardId).startingPosition(from.build())
      .overrideConfiguration(SdkCallStats.countedBy(tally))
      .build()
  }

  private def onEvent(sub: Sub, event: SubscribeToShardEventStream): () => Unit = synchronized {
    sub.asked = false
    if (sub.ended || (current ne sub) || closed) Noop
    else event match {
      case e: SubscribeToShardEvent =>
        counts.events.increment()
        failuresInARow = 0
        try {
          val poll = take(e)
          val answer = waiting
          waiting = null
          if (answer == null) { ready.addLast(poll); Noop }
          else () => { answer.complete(poll); () }
        } catch {
          case NonFatal(error) => fail(error) // a resume that found records lost, under failOnDataLoss
        }
      case _ => demand() // an event this SDK does not know: nothing to pass on, ask for the next
    }
  }

  /** Under the monitor: an event's records after `position`, and where the shard's reading stands after it. */
  private def take(e: SubscribeToShardEvent): Poll = {
    val ended = (e.hasChildShards && !e.childShards().isEmpty) || e.continuationSequenceNumber() == null
    val records = e.records()
    millisBehind = Option(e.millisBehindLatest()).map(_.longValue).getOrElse(0L)
    resumeRecord = resumeRecord.flatMap(ShardReader.checkResumed(
      config,
      key,
      position,
      _,
      if (records.isEmpty) None else Some(records.get(0).sequenceNumber()),
      ended || millisBehind == 0))
    val poll = ShardReader.decode(key, position, records, e.millisBehindLatest(), ended, filled = false, hashKeys)
    poll.records.lastPosition.foreach(position = _)
    continuation = Option(e.continuationSequenceNumber())
    if (ended) position = ShardEnd
    poll
  }

  private def onEnd(sub: Sub, error: Option[Throwable]): () => Unit = synchronized {
    if (current ne sub) Noop
    else {
      current = null
      if (closed || position == ShardEnd) Noop
      else error.map(PollingFetcher.cause) match {
        case None =>
          counts.renewals.increment() // its 5 minutes are over
          demand()
        case Some(e: KinesisException)
            if continuation.isEmpty && ShardReader.isLostPosition(position, e) &&
              !e.isInstanceOf[ResourceNotFoundException] =>
          try { position = ShardReader.lostPosition(config, key, position, e); demand() }
          catch { case NonFatal(lost) => fail(lost) }
        case Some(e) if fatal(e) => fail(e)
        case Some(e) =>
          counts.streamErrors.increment()
          failuresInARow += 1
          if (backoff.exhausted(failuresInARow)) fail(e)
          else {
            logInfo(s"Enhanced fan-out subscription of $key ended ($e); subscribing again (failure $failuresInARow in a row)")
            demand()
          }
      }
    }
  }

  /** Under the monitor: the waiting poll fails with `e` (its feed fails, and the query with it). */
  private def fail(e: Throwable): () => Unit = {
    val answer = waiting
    waiting = null
    val open = Option(current)
    current = null
    () => { open.foreach(_.cancel()); if (answer != null) answer.completeExceptionally(e); () }
  }

  /**
   * Failures another subscription would meet again: the consumer or the shard is gone, or the request is refused
   * for what it is (access denied, keys unknown, a KMS key denied). Kinesis answers those with 400, like the two
   * refusals that pass: throttling and `ResourceInUseException` (a subscription still open, or one made less than
   * 5 s ago). So every 4xx but those two kinds (and a signature refused for clock skew, which the SDK corrects) is
   * final, as the SDK's own retry policy treats the polling calls.
   */
  private def fatal(e: Throwable): Boolean = e match {
    case _: ResourceNotFoundException | _: InvalidArgumentException => true
    case _: ResourceInUseException | _: LimitExceededException | _: KmsThrottlingException => false
    case k: KinesisException =>
      val status = k.statusCode()
      status >= 400 && status < 500 && !k.isThrottlingException && !k.isClockSkewException
    case _ => false
  }

  /** One SubscribeToShard call and its events, asked for one at a time. */
  private final class Sub extends Subscriber[SubscribeToShardEventStream] {
    private var stream: Subscription = null
    /** An event is asked for and has not come yet (the fetcher's monitor). */
    var asked = false
    @volatile var ended = false
    @volatile var call: CompletableFuture[Void] = null

    /** Under the fetcher's monitor. */
    def askOne(): () => Unit =
      if (stream == null || asked) Noop
      else { asked = true; val s = stream; () => s.request(1) }

    def cancel(): Unit = {
      ended = true
      val s = FanOutFetcher.this.synchronized(stream)
      if (s != null) s.cancel()
      Option(call).foreach(_.cancel(false))
    }

    def end(error: Option[Throwable]): Unit = if (!ended) {
      ended = true
      onEnd(this, error)()
    }

    override def onSubscribe(s: Subscription): Unit = {
      val next = FanOutFetcher.this.synchronized {
        if (ended || closed || (current ne this)) () => s.cancel()
        else { stream = s; demand() }
      }
      next()
    }

    override def onNext(event: SubscribeToShardEventStream): Unit = onEvent(this, event)()
    override def onError(t: Throwable): Unit = end(Some(t))
    override def onComplete(): Unit = end(None)
  }
}

/** What enhanced fan-out did in a JVM for one query, for its metrics. */
final class FanOutTally {
  val subscriptions, renewals, events, streamErrors = new LongAdder

  def snapshot(): FanOutCounts =
    FanOutCounts(subscriptions.sum(), renewals.sum(), events.sum(), streamErrors.sum())
}

object FanOutFetcher {
  /** Kinesis allows one SubscribeToShard per second per consumer and shard. */
  val MinSubscribeSpacing: java.time.Duration = java.time.Duration.ofSeconds(1)
  private val Noop: () => Unit = () => ()

  private lazy val timer: ScheduledExecutorService = DaemonThreads.singleScheduler("kinesis-fan-out")
}
