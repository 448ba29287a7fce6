package io.github.sparkkinesis.client

import java.util.concurrent.atomic.{AtomicLong, LongAdder}

import scala.jdk.CollectionConverters._

import org.apache.spark.internal.Logging
import software.amazon.awssdk.core.metrics.CoreMetric
import software.amazon.awssdk.metrics.{MetricCollection, MetricPublisher}

/** Counts of SDK calls in this JVM, for source and sink metrics: what was retried, and why. */
final case class CallCounts(calls: Long, retries: Long, throttled: Long, serverErrors: Long) {
  def -(other: CallCounts): CallCounts =
    CallCounts(calls - other.calls, retries - other.retries, throttled - other.throttled, serverErrors - other.serverErrors)
  def +(other: CallCounts): CallCounts =
    CallCounts(calls + other.calls, retries + other.retries, throttled + other.throttled, serverErrors + other.serverErrors)
}

/** Counts the calls it is attached to (per request), e.g. one query's reads among every call of the JVM. */
final class CallTally extends MetricPublisher {
  private val calls, retries, throttled, serverErrors = new LongAdder

  def snapshot(): CallCounts = CallCounts(calls.sum(), retries.sum(), throttled.sum(), serverErrors.sum())

  override def publish(metrics: MetricCollection): Unit = {
    val c = SdkCallStats.countsOf(metrics)
    calls.add(c.calls)
    retries.add(c.retries)
    throttled.add(c.throttled)
    serverErrors.add(c.serverErrors)
  }

  override def close(): Unit = ()
}

/**
 * Fed by the SDK's own metrics (every client the factory builds publishes here), so retries done inside the SDK's
 * retry strategy are still seen. Retries are logged at WARN with counts, at most once per interval, so a long
 * throttling episode reads as a few lines, not thousands.
 */
object SdkCallStats extends MetricPublisher with Logging {
  private val LogIntervalNanos = 10L * 1000 * 1000 * 1000
  private val calls, retries, throttled, serverErrors = new LongAdder
  private val unloggedRetries, unloggedThrottled = new LongAdder
  private val lastLogNanos = new AtomicLong(System.nanoTime() - LogIntervalNanos)

  def snapshot(): CallCounts = CallCounts(calls.sum(), retries.sum(), throttled.sum(), serverErrors.sum())

  /** One call's counts: itself, its retries, and its attempts refused by throttling or failed by the server. */
  def countsOf(metrics: MetricCollection): CallCounts = {
    val errorTypes = metrics.children().asScala.flatMap(_.metricValues(CoreMetric.ERROR_TYPE).asScala)
    CallCounts(1, metrics.metricValues(CoreMetric.RETRY_COUNT).asScala.map(_.intValue).sum,
      errorTypes.count(_ == "Throttling"), errorTypes.count(_ == "ServerError"))
  }

  override def publish(metrics: MetricCollection): Unit = {
    val c = countsOf(metrics)
    val retried = c.retries
    val throttledAttempts = c.throttled
    calls.increment()
    retries.add(retried)
    throttled.add(throttledAttempts)
    serverErrors.add(c.serverErrors)
    if (retried > 0) {
      unloggedRetries.add(retried)
      unloggedThrottled.add(throttledAttempts)
      val now = System.nanoTime()
      val last = lastLogNanos.get()
      if (now - last >= LogIntervalNanos && lastLogNanos.compareAndSet(last, now)) {
        val operation = metrics.metricValues(CoreMetric.OPERATION_NAME).asScala.headOption.getOrElse("Kinesis call")
        logWarning(s"Kinesis calls were retried: ${unloggedRetries.sumThenReset()} retries " +
          s"(${unloggedThrottled.sumThenReset()} throttled) in the last ${(now - last) / 1000000000L} s, latest on $operation")
      }
    }
  }

  override def close(): Unit = ()
}
