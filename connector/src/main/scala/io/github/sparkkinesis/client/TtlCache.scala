package io.github.sparkkinesis.client

import java.util.concurrent.ConcurrentHashMap

/**
 * Answers of a rate-limited Kinesis call (ListShards, DescribeStreamSummary), reused per key for `ttlNanos`.
 * A load runs outside any lock, so a slow call for one key holds up no other; two threads may load the same key
 * at once, and the later answer is kept, which for these calls is as good as the earlier.
 *
 * @param clock nanoseconds, replaceable in tests
 */
final class TtlCache[K, V](ttlNanos: Long, clock: () => Long = () => System.nanoTime()) {
  import TtlCache.Entry
  private val entries = new ConcurrentHashMap[K, Entry[V]]()

  /**
   * The answer for `key` if it is younger than `maxAgeNanos`, else a new one from `load`, which is given the
   * previous answer (if any) and whose answer is kept. A failing load keeps nothing.
   */
  def get(key: K, maxAgeNanos: Long = ttlNanos)(load: Option[V] => V): V = {
    val now = clock()
    val cached = Option(entries.get(key))
    cached match {
      case Some(e) if now - e.loadedNanos < maxAgeNanos => e.value
      case _ =>
        val value = load(cached.map(_.value))
        entries.put(key, Entry(value, now))
        value
    }
  }

  /** The next `get` of every key loads again. */
  def clear(): Unit = entries.clear()
}

private object TtlCache {
  final case class Entry[V](value: V, loadedNanos: Long)
}
