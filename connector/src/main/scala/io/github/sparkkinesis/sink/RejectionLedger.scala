package io.github.sparkkinesis.sink

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.TaskContext
import org.apache.spark.sparkkinesis.DriverChannel

/** A writer task rejected a row for good (null key, over-size record...): its partition, epoch and message. */
final case class RowRejected(partition: Int, epoch: Long, message: String)
/** Asked by a retried task: did an earlier attempt reject a row? Answered with the message, or "". */
final case class WasRejected(partition: Int, epoch: Long)

/**
 * Remembers, on the driver, the tasks of one write that rejected a row for good. Spark retries a failed task
 * (`spark.task.maxFailures`, 4 on a cluster), and a retry would send every row before the bad one again, only
 * to fail at the same row: a retry of such a task fails at once instead, having sent nothing. The ledger speaks
 * Spark's RPC ([[DriverChannel]]); when it cannot be reached, retries behave as before (at-least-once).
 *
 * @param name the driver endpoint, shipped to the executors inside the writer factory
 */
final case class RejectionLedger(name: String) {
  /** In a task that rejects a row: told to the driver, and acknowledged, before the task fails. */
  def record(partition: Int, epoch: Long, message: String): Unit = {
    DriverChannel.ask(name, RowRejected(partition, epoch, message))
    ()
  }

  /** In a retried task: the message of the row an earlier attempt of it rejected. */
  def rejectedBefore(partition: Int, epoch: Long): Option[String] =
    if (Option(TaskContext.get()).forall(_.attemptNumber() == 0)) None
    else DriverChannel.ask(name, WasRejected(partition, epoch)).collect { case m: String if m.nonEmpty => m }
}

object RejectionLedger {
  /** On the driver: a new ledger and the function that closes it, or None when Spark's RPC is not there. */
  def open(): Option[(RejectionLedger, () => Unit)] = {
    val name = s"spark-kinesis-sink-${UUID.randomUUID()}"
    val rejected = new ConcurrentHashMap[(Int, Long), String]()
    DriverChannel.listen(name) {
      case RowRejected(partition, epoch, message) => rejected.putIfAbsent((partition, epoch), message); true
      case WasRejected(partition, epoch) => Option(rejected.get((partition, epoch))).getOrElse("")
      case _ => ()
    }.map(close => (RejectionLedger(name), close))
  }
}
