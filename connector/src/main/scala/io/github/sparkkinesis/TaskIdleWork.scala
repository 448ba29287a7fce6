package io.github.sparkkinesis

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.TaskContext

/**
 * Work a task's Kinesis writer does while the task waits for its next row. The sink's sends are driven by the
 * task's own thread (its state needs no locks), which in real-time mode can wait seconds inside the source for a
 * row: rows queued behind requests in flight would wait as long. When the source is this connector's, it lends the
 * task's thread to the writer while it waits (`RealTimeReader`), so a Kinesis-to-Kinesis real-time query sends as
 * soon as a request slot frees up.
 */
object TaskIdleWork {
  private val byTask = new ConcurrentHashMap[java.lang.Long, Runnable]()

  /** The running task's writer registers its idle work; it is forgotten when the task ends. */
  def register(work: Runnable): Unit = Option(TaskContext.get()).foreach { task =>
    val id = java.lang.Long.valueOf(task.taskAttemptId())
    byTask.put(id, work)
    task.addTaskCompletionListener[Unit]((_: TaskContext) => byTask.remove(id))
  }

  /** The running task's idle work, or null. */
  def current(): Runnable =
    Option(TaskContext.get()).map(t => byTask.get(java.lang.Long.valueOf(t.taskAttemptId()))).orNull
}
