package io.github.sparkkinesis.source
package executor

import java.nio.charset.StandardCharsets.{ISO_8859_1, UTF_8}

import scala.annotation.nowarn

import org.apache.spark.unsafe.types.UTF8String

/**
 * User records in order, held compactly: every partition key, payload and sequence number of one GetRecords
 * answer in one byte array, their bounds in one int array, sub-sequence numbers and arrival times in two long
 * arrays. A buffered record is then a few dozen bytes beside its payload instead of five objects, and the
 * garbage collector copies a handful of arrays per answer instead of tracing millions of records held for a batch.
 * A large payload the SDK decoded into an array of its own is kept as that array ([[RecordBlock.Builder.adopt]]):
 * copying it into the block and again into a row cost more than one more object among few large ones.
 *
 * A block is a view (`first`, `size`) over shared arrays: dropping committed records or planning part of an answer
 * makes a smaller view, never a copy. Never mutated once built, so views may be read from any thread.
 */
final class RecordBlock private (
    bytes: Array[Byte],
    /** Record i's key starts at bounds(3i), its payload at bounds(3i+1), its sequence number at bounds(3i+2). */
    bounds: Array[Int],
    subs: Array[Long],
    arrivals: Array[Long],
    /** Record i's payload when it was adopted (its span in `bytes` is then empty); null when none was. */
    adopted: Array[Array[Byte]],
    /** What adopted payloads before record i cost the heap ([[RecordBlock.AdoptedOverheadBytes]] each included). */
    adoptedHeap: Array[Long],
    /** Indexes, in the arrays, of records that are malformed KPL aggregates read whole, ascending; null when none. */
    malformed: Array[Int],
    /** Records in the arrays (a view may show fewer). */
    total: Int,
    first: Int,
    val size: Int) {

  def isEmpty: Boolean = size == 0

  private def at(i: Int): Int = {
    if (i < 0 || i >= size) throw new IndexOutOfBoundsException(s"record $i of $size")
    3 * (first + i)
  }

  def partitionKey(i: Int): UTF8String = {
    val b = at(i); UTF8String.fromBytes(bytes, bounds(b), bounds(b + 1) - bounds(b))
  }
  def keyString(i: Int): String = { val b = at(i); new String(bytes, bounds(b), bounds(b + 1) - bounds(b), UTF_8) }

  /**
   * The payload in an array of exactly its length, as a row's binary column holds it: the adopted array itself
   * (shared, never written: Spark copies a scan's rows into its own format first), else a copy.
   */
  def data(i: Int): Array[Byte] = {
    val b = at(i)
    val own = adoptedAt(first + i)
    if (own != null) own else java.util.Arrays.copyOfRange(bytes, bounds(b + 1), bounds(b + 2))
  }

  private def adoptedAt(k: Int): Array[Byte] = if (adopted == null) null else adopted(k)
  private def adoptedLength(k: Int): Int = { val own = adoptedAt(k); if (own == null) 0 else own.length }
  private def adoptedHeapBefore(k: Int): Long = if (adoptedHeap == null) 0L else adoptedHeap(k)

  def sequenceNumberUtf8(i: Int): UTF8String = {
    val b = at(i); UTF8String.fromBytes(bytes, bounds(b + 2), bounds(b + 3) - bounds(b + 2))
  }
  def sequenceNumber(i: Int): String = {
    val b = at(i); new String(bytes, bounds(b + 2), bounds(b + 3) - bounds(b + 2), ISO_8859_1)
  }
  def subSequenceNumber(i: Int): Long = subs(first + i)
  def arrivalMillis(i: Int): Long = arrivals(first + i)

  /** What the stream counts for the record: payload and partition key (UTF-8) bytes. */
  def recordBytes(i: Int): Long = { val b = at(i); bounds(b + 2) - bounds(b) + adoptedLength(first + i) }

  /** What holding the record costs: its bytes and its share of the arrays. */
  def heapBytes(i: Int): Long = { at(i); heapBytes(i, i + 1) }

  /** Whether record i is a malformed KPL aggregate read whole ([[KplDeaggregator.Malformed]]), for metrics. */
  def isMalformedAggregate(i: Int): Boolean =
    malformed != null && java.util.Arrays.binarySearch(malformed, first + i) >= 0

  def position(i: Int): ShardPosition.After = ShardPosition.After(sequenceNumber(i), subSequenceNumber(i))
  def lastPosition: Option[ShardPosition.After] = if (isEmpty) None else Some(position(size - 1))
  def record(i: Int): UserRecord =
    UserRecord(keyString(i), data(i), sequenceNumber(i), subSequenceNumber(i), arrivalMillis(i))

  /** Record i against `p` (negative: before it), comparing sequence numbers as numbers without building strings. */
  def compareTo(i: Int, p: ShardPosition.After): Int = {
    val b = at(i)
    val start = bounds(b + 2)
    val length = bounds(b + 3) - start
    val other = p.sequenceNumber
    var c = Integer.compare(length, other.length)
    var k = 0
    while (c == 0 && k < length) { c = Integer.compare(bytes(start + k) & 0xff, other.charAt(k).toInt); k += 1 }
    if (c != 0) c else java.lang.Long.compare(subSequenceNumber(i), p.subSequenceNumber)
  }

  /** How many leading records reach a range's end `to` (a shard end takes every record; no other end is planned). */
  def countReaching(to: ShardPosition): Int = to match {
    case t: ShardPosition.After => countAtOrBefore(t)
    case ShardPosition.ShardEnd => size
    case _ => 0
  }

  /** How many leading records are at or before `p` (records are in order: a binary search). */
  def countAtOrBefore(p: ShardPosition.After): Int = {
    var lo = 0
    var hi = size
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (compareTo(mid, p) <= 0) lo = mid + 1 else hi = mid
    }
    lo
  }

  /** Whether one of the records is exactly at `p`. */
  def holds(p: ShardPosition.After): Boolean = { val n = countAtOrBefore(p); n > 0 && compareTo(n - 1, p) == 0 }

  /** [[heapBytes]] of records `from` until `until`. */
  def heapBytes(from: Int, until: Int): Long =
    if (until <= from) 0L
    else {
      bounds(3 * (first + until)) - bounds(3 * (first + from)) + RecordBlock.PerRecordBytes * (until - from) +
        adoptedHeapBefore(first + until) - adoptedHeapBefore(first + from)
    }

  def take(n: Int): RecordBlock = slice(0, n)
  def drop(n: Int): RecordBlock = slice(n, size)

  def slice(from: Int, until: Int): RecordBlock = {
    val f = math.max(0, math.min(from, size))
    val u = math.max(f, math.min(until, size))
    if (f == 0 && u == size) this
    else new RecordBlock(bytes, bounds, subs, arrivals, adopted, adoptedHeap, malformed, total, first + f, u - f)
  }

  /**
   * This view in arrays of its own when it shows part of its arrays only: a feed that keeps the rest of a partly
   * committed answer then holds what it accounts, not the whole answer (one copy per shard and batch at most).
   */
  def compact(): RecordBlock =
    if (first == 0 && size == total) this
    else {
      val from = bounds(3 * first)
      val rebased = new Array[Int](3 * size + 1)
      var k = 0
      while (k <= 3 * size) { rebased(k) = bounds(3 * first + k) - from; k += 1 }
      val heap = if (adoptedHeap == null) null
      else {
        val h = new Array[Long](size + 1)
        var j = 0
        while (j <= size) { h(j) = adoptedHeap(first + j) - adoptedHeap(first); j += 1 }
        h
      }
      new RecordBlock(
        java.util.Arrays.copyOfRange(bytes, from, bounds(3 * (first + size))),
        rebased,
        java.util.Arrays.copyOfRange(subs, first, first + size),
        java.util.Arrays.copyOfRange(arrivals, first, first + size),
        if (adopted == null) null else java.util.Arrays.copyOfRange(adopted, first, first + size),
        heap,
        if (malformed == null) null else malformed.filter(k => k >= first && k < first + size).map(_ - first),
        size,
        0,
        size
      )
    }

  def iterator: Iterator[UserRecord] = Iterator.range(0, size).map(record)
}

object RecordBlock {
  /** The arrays' part of one record: three bounds, a sub-sequence number and an arrival time. */
  val PerRecordBytes = 28L
  /** Payloads at least this large are adopted (kept as the array they came in), smaller ones copied in. */
  val AdoptMinBytes = 512
  /** An adopted payload's cost beside its bytes: the array's header, its slot and its share of the heap sums. */
  val AdoptedOverheadBytes = 28L

  val empty: RecordBlock = new Builder(0).result()

  def of(records: Iterable[UserRecord]): RecordBlock = {
    val b = new Builder(records.size)
    records.foreach(r =>
      b.add(r.partitionKey, r.data, 0, r.data.length, r.sequenceNumber, r.subSequenceNumber, r.arrivalMillis))
    b.result()
  }

  /** Builds a block from records added in order; sized from a first guess, grown when the guess was short. */
  final class Builder(expectedRecords: Int, expectedBytes: Int = 0) {
    private var bytes = new Array[Byte](math.max(16, expectedBytes))
    private var bounds = new Array[Int](3 * math.max(1, expectedRecords) + 1)
    private var subs = new Array[Long](math.max(1, expectedRecords))
    private var arrivals = new Array[Long](math.max(1, expectedRecords))
    private var adopted: Array[Array[Byte]] = null
    private var adoptedHeap: Array[Long] = null
    private var malformed: Array[Int] = null
    private var n = 0
    private var end = 0

    def size: Int = n

    /** Adds a record whose payload is copied in from `data`. */
    def add(key: String, data: Array[Byte], offset: Int, length: Int, seq: String, sub: Long, arrival: Long): Unit =
      put(key, data, offset, length, seq, sub, arrival)

    /**
     * Adds a record whose payload is the whole of `data`, which nobody writes to again (an array the SDK decoded
     * for this record): a large one is kept as it is, a small one copied in like [[add]].
     */
    def adopt(key: String, data: Array[Byte], seq: String, sub: Long, arrival: Long): Unit =
      if (data.length < AdoptMinBytes) put(key, data, 0, data.length, seq, sub, arrival)
      else {
        if (adopted == null) {
          adopted = new Array[Array[Byte]](subs.length)
          adoptedHeap = new Array[Long](subs.length + 1)
        }
        put(key, data, 0, 0, seq, sub, arrival)
        adopted(n - 1) = data
        adoptedHeap(n) += data.length + AdoptedOverheadBytes
      }

    /** Marks the record added last as a malformed KPL aggregate read whole (rare: an array grown one at a time). */
    def markMalformedAggregate(): Unit =
      malformed = if (malformed == null) Array(n - 1) else malformed :+ (n - 1)

    private def put(
        key: String,
        data: Array[Byte],
        offset: Int,
        length: Int,
        seq: String,
        sub: Long,
        arrival: Long): Unit = {
      if (n == subs.length) {
        val grown = math.max(2 * n, 4)
        bounds = java.util.Arrays.copyOf(bounds, 3 * grown + 1)
        subs = java.util.Arrays.copyOf(subs, grown)
        arrivals = java.util.Arrays.copyOf(arrivals, grown)
        if (adopted != null) {
          adopted = java.util.Arrays.copyOf(adopted, grown)
          adoptedHeap = java.util.Arrays.copyOf(adoptedHeap, grown + 1)
        }
      }
      val encoded = if (isAscii(key)) null else key.getBytes(UTF_8) // keys are almost always ASCII
      val keyBytes = if (encoded == null) key.length else encoded.length
      ensure(keyBytes + length + seq.length)
      bounds(3 * n) = end
      if (encoded == null) asciiInto(key, end) else System.arraycopy(encoded, 0, bytes, end, encoded.length)
      end += keyBytes
      bounds(3 * n + 1) = end
      System.arraycopy(data, offset, bytes, end, length)
      end += length
      bounds(3 * n + 2) = end
      asciiInto(seq, end) // sequence numbers are decimal digits
      end += seq.length
      subs(n) = sub
      arrivals(n) = arrival
      n += 1
      if (adoptedHeap != null) adoptedHeap(n) = adoptedHeap(n - 1)
    }

    /**
     * The string's chars as bytes, for ASCII only: a copy of a compact string's own bytes (with a char-by-char
     * loop instead, decoding a 100 B record took a third to a half longer at best, measured).
     */
    @nowarn("cat=deprecation")
    private def asciiInto(s: String, at: Int): Unit = s.getBytes(0, s.length, bytes, at)

    private def ensure(more: Int): Unit =
      if (bytes.length - end < more) bytes = java.util.Arrays.copyOf(bytes, math.max(2 * bytes.length, end + more))

    private def isAscii(s: String): Boolean = {
      var k = 0
      while (k < s.length && s.charAt(k) < 0x80) k += 1
      k == s.length
    }

    /** The block; trims the byte array when the guess was far too large (a block may be held for a while). */
    def result(): RecordBlock = {
      bounds(3 * n) = end
      val held = if (bytes.length > end + end / 4 + 64) java.util.Arrays.copyOf(bytes, end) else bytes
      new RecordBlock(held, bounds, subs, arrivals, adopted, adoptedHeap, malformed, n, 0, n)
    }
  }
}
