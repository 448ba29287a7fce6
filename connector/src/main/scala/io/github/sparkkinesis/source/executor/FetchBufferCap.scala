package io.github.sparkkinesis.source
package executor

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.internal.Logging

/**
 * The most `fetchBufferSize` may hold in one executor: a quarter of its heap. Databricks' default is 20gb, a point
 * where its prefetching stops rather than a bound; here the buffer is a bound the executor's heap must really
 * hold, so a job migrated with such a value would run out of memory instead of reading. A quarter is twice the
 * default: reading holds about 1.3 times the buffer at its peak (answers in flight may bring 1/32 of it, decoded
 * several times over: see [[Prefetcher.InFlightShare]]), a third of the heap, within the 40% Spark leaves outside
 * its execution and storage memory (`spark.memory.fraction` 0.6).
 */
object FetchBufferCap extends Logging {
  val HeapShare = 4

  /** This JVM's heap, read once: the buffer's bound is looked at before every call. */
  val maxHeapBytes: Long = Runtime.getRuntime.maxMemory()

  def capOf(maxHeapBytes: Long): Long = maxHeapBytes / HeapShare

  /** The buffer an executor with this heap uses when asked for `asked` bytes. */
  def limit(asked: Long, maxHeapBytes: Long): Long = math.min(asked, capOf(maxHeapBytes))

  /** Why `asked` was lowered: the INFO line an executor logs once for it. */
  def explanation(asked: Long, maxHeapBytes: Long): String =
    s"fetchBufferSize asks for ${mib(asked)}; this executor holds at most ${mib(capOf(maxHeapBytes))} (1/$HeapShare " +
      s"of its ${mib(maxHeapBytes)} heap), so the buffer is capped there: prefetching pauses when it is full instead " +
      "of running the executor out of memory (raise the executor's memory for a larger buffer)"

  private def mib(bytes: Long): String = s"${bytes / (1024 * 1024)} MiB"

  private val logged = ConcurrentHashMap.newKeySet[java.lang.Long]()

  /** This JVM's buffer for `asked`, logging the cap once per value asked when it applies. */
  def apply(asked: Long): Long = {
    val heap = maxHeapBytes
    val capped = limit(asked, heap)
    if (capped < asked && logged.add(asked)) logInfo(explanation(asked, heap))
    capped
  }
}
