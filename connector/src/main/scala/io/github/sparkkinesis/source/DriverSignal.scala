package io.github.sparkkinesis.source

import org.apache.spark.sparkkinesis.DriverChannel

/** What an executor tells a query's driver: something its feeds offer changed (records, an end, a failure). */
final case class FeedsChanged(sourceId: String)

/**
 * The driver's end of the executors' signals for one source: a count of signals and a wait for the next. With it
 * an idle query asks its executors nothing: a trigger waits a moment for a signal and, when none comes, reports
 * nothing new without running a Spark job. An executor signals at most once between two snapshot tasks.
 */
final class DriverSignal(sourceId: String) {
  private var signals = 0L
  private var opened = false
  private var close: Option[() => Unit] = None

  /** Opens the endpoint the first time (on the driver, once Spark runs); whether executors can signal it. */
  def open(): Boolean = synchronized {
    if (!opened) {
      opened = true
      close = DriverChannel.listen(DriverSignal.endpointName(sourceId)) {
        case FeedsChanged(id) if id == sourceId => received()
        case _ => ()
      }
    }
    close.isDefined
  }

  private def received(): Unit = synchronized { signals += 1; notifyAll() }

  def count: Long = synchronized(signals)

  /** Waits up to `timeoutNanos` for a signal after the first `seen`; whether one came. */
  def awaitAfter(seen: Long, timeoutNanos: Long): Boolean = synchronized {
    val deadline = System.nanoTime() + timeoutNanos
    var remaining = timeoutNanos
    while (signals == seen && remaining > 0) {
      java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, remaining)
      remaining = deadline - System.nanoTime()
    }
    signals != seen
  }

  def stop(): Unit = synchronized { close.foreach(_()); close = None }
}

object DriverSignal {
  def endpointName(sourceId: String): String = s"spark-kinesis-source-$sourceId"
}
