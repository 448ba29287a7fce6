package io.github.sparkkinesis.client

import java.util.concurrent.atomic.{AtomicLong, LongAdder}

import org.apache.spark.internal.Logging
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration
import software.amazon.awssdk.awscore.exception.AwsServiceException
import software.amazon.awssdk.core.exception.SdkServiceException
import software.amazon.awssdk.core.interceptor.{Context, ExecutionAttribute, ExecutionAttributes, ExecutionInterceptor}

/** Counts of SDK calls in this JVM, for source and sink metrics: what was retried, and why. */
final case class CallCounts(calls: Long, retries: Long, throttled: Long, serverErrors: Long) {
  def -(other: CallCounts): CallCounts =
    CallCounts(
      calls - other.calls,
      retries - other.retries,
      throttled - other.throttled,
      serverErrors - other.serverErrors)
  def +(other: CallCounts): CallCounts =
    CallCounts(
      calls + other.calls,
      retries + other.retries,
      throttled + other.throttled,
      serverErrors + other.serverErrors)
}

/** Counts the calls it is attached to (per request, see [[SdkCallStats.Tally]]), e.g. one query's reads. */
final class CallTally {
  private val calls, retries, throttled, serverErrors = new LongAdder

  def snapshot(): CallCounts = CallCounts(calls.sum(), retries.sum(), throttled.sum(), serverErrors.sum())

  private[client] def add(c: CallCounts): Unit = {
    calls.add(c.calls)
    retries.add(c.retries)
    throttled.add(c.throttled)
    serverErrors.add(c.serverErrors)
  }
}

/**
 * Every call of the clients the factory builds, counted by attempt through the SDK's interceptor hooks, so
 * retries done inside the SDK's retry strategy are seen. (The SDK's metrics would tell the same, but once any
 * publisher is set they time every stage of every call: a quarter of an empty GetRecords' CPU, measured at a
 * thousand idle shards.) An attempt answered 5xx is a server error; one answered 400 or 429 and retried is
 * throttling, since the retry strategy retries no other client error (rare retryable timeouts count with it);
 * a call's last attempt counts by its failure. Retries are logged at WARN with counts, at most once per interval,
 * so a long throttling episode reads as a few lines, not thousands.
 */
object SdkCallStats extends ExecutionInterceptor with Logging {
  /** Put on a request: its counts also go to this tally. */
  val Tally = new ExecutionAttribute[CallTally]("spark-kinesis.callTally")

  /** For a request's `overrideConfiguration`: its calls (attempts included) are added to `tally`. */
  def countedBy(tally: CallTally): java.util.function.Consumer[AwsRequestOverrideConfiguration.Builder] =
    (o: AwsRequestOverrideConfiguration.Builder) => o.putExecutionAttribute(Tally, tally)
  private val State = new ExecutionAttribute[CallState]("spark-kinesis.callState")

  /** One call's attempts so far; its attempts run one after another, handed over through the SDK's futures. */
  private final class CallState {
    @volatile var attempts = 0
    @volatile var lastStatus = 0
    @volatile var throttled = 0
    @volatile var serverErrors = 0

    def endAttempt(status: Int): Unit =
      if (status >= 500) serverErrors += 1 else if (status == 400 || status == 429) throttled += 1
  }

  private val LogIntervalNanos = 10L * 1000 * 1000 * 1000
  private val calls, retries, throttled, serverErrors = new LongAdder
  private val unloggedRetries, unloggedThrottled = new LongAdder
  private val lastLogNanos = new AtomicLong(System.nanoTime() - LogIntervalNanos)

  def snapshot(): CallCounts = CallCounts(calls.sum(), retries.sum(), throttled.sum(), serverErrors.sum())

  override def beforeExecution(context: Context.BeforeExecution, attributes: ExecutionAttributes): Unit =
    attributes.putAttribute(State, new CallState)

  /** Runs once per attempt: a second attempt means the one before failed and was retried. */
  override def beforeTransmission(context: Context.BeforeTransmission, attributes: ExecutionAttributes): Unit =
    Option(attributes.getAttribute(State)).foreach { s =>
      if (s.attempts > 0) s.endAttempt(s.lastStatus)
      s.attempts += 1
      s.lastStatus = 0 // no answer at all (a network error) is neither
    }

  override def afterTransmission(context: Context.AfterTransmission, attributes: ExecutionAttributes): Unit =
    Option(attributes.getAttribute(State)).foreach(_.lastStatus = context.httpResponse().statusCode())

  override def afterExecution(context: Context.AfterExecution, attributes: ExecutionAttributes): Unit =
    finish(attributes, None)

  override def onExecutionFailure(context: Context.FailedExecution, attributes: ExecutionAttributes): Unit =
    finish(attributes, Some(context.exception()))

  private def finish(attributes: ExecutionAttributes, failure: Option[Throwable]): Unit =
    Option(attributes.getAttribute(State)).foreach { s =>
      failure.foreach {
        case e: AwsServiceException if e.isThrottlingException => s.throttled += 1
        case e: SdkServiceException if e.statusCode() >= 500 => s.serverErrors += 1
        case _ => ()
      }
      val c = CallCounts(1, math.max(0, s.attempts - 1), s.throttled, s.serverErrors)
      Option(attributes.getAttribute(Tally)).foreach(_.add(c))
      record(
        c,
        Option(attributes.getAttribute(software.amazon.awssdk.core.interceptor.SdkExecutionAttribute.OPERATION_NAME)))
    }

  private def record(c: CallCounts, operation: Option[String]): Unit = {
    calls.increment()
    retries.add(c.retries)
    throttled.add(c.throttled)
    serverErrors.add(c.serverErrors)
    if (c.retries > 0) {
      unloggedRetries.add(c.retries)
      unloggedThrottled.add(c.throttled)
      val now = System.nanoTime()
      val last = lastLogNanos.get()
      if (now - last >= LogIntervalNanos && lastLogNanos.compareAndSet(last, now)) {
        logWarning(s"Kinesis calls were retried: ${unloggedRetries.sumThenReset()} retries " +
          s"(${unloggedThrottled.sumThenReset()} throttled) in the last ${(now - last) / 1000000000L} s, latest on " +
          operation.getOrElse("Kinesis call"))
      }
    }
  }
}
