package io.github.sparkkinesis.source

import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

/**
 * Executor-side cache of what fetch tasks read, so the micro-batch that plans those records reads them from memory
 * instead of from Kinesis a second time. Purely a cache: a batch that finds no matching buffer re-reads its range
 * (see docs/design/offsets.md). Keyed by the source instance, so two queries never share a buffer.
 */
object ShardBuffers {
  /** Records following `from`; `reader` continues after the last of them. Guarded by its own monitor. */
  final class Buffer(var from: ShardPosition, val reader: ShardReader) {
    val records: ArrayBuffer[UserRecord] = ArrayBuffer.empty
    @volatile var lastUsedNanos: Long = System.nanoTime()
    def last: ShardPosition = reader.current
  }

  private val IdleEvictionNanos = 10L * 60 * 1000 * 1000 * 1000
  private val buffers = new ConcurrentHashMap[(String, ShardKey), Buffer]()

  def get(sourceId: String, key: ShardKey): Option[Buffer] = Option(buffers.get((sourceId, key)))

  /**
   * The buffer to fetch `key` from `from` with: the existing one when its reader stands exactly there (its
   * records were planned already and are dropped unless `keepRecords`), else a new one with a fresh reader.
   */
  def forFetch(sourceId: String, key: ShardKey, from: ShardPosition, keepRecords: Boolean,
      newReader: => ShardReader): Buffer = {
    evictIdle()
    val buffer = buffers.compute((sourceId, key), (_, existing) =>
      if (existing != null && existing.last == from) existing else new Buffer(from, newReader))
    buffer.synchronized {
      // A streaming batch has planned the records up to `from` already; a batch read plans them all at the end.
      if (buffer.from != from && !keepRecords) {
        buffer.records.clear()
        buffer.from = from
      }
      buffer.lastUsedNanos = System.nanoTime()
    }
    buffer
  }

  /** Drops every buffer of a source, e.g. when its query stops. */
  def release(sourceId: String): Unit = buffers.keySet().asScala.filter(_._1 == sourceId).foreach(buffers.remove)

  private def evictIdle(): Unit = {
    val now = System.nanoTime()
    buffers.entrySet().removeIf(e => now - e.getValue.lastUsedNanos > IdleEvictionNanos)
  }
}
