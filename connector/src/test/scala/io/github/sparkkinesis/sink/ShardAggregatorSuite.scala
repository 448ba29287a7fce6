package io.github.sparkkinesis.sink

import io.github.sparkkinesis.sink.executor.{KplAggregate, PendingRecord, ShardAggregator, ShardMap, UserEntry}
import io.github.sparkkinesis.source.ShardKey
import io.github.sparkkinesis.source.executor.KplDeaggregator
import java.math.BigInteger

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

class ShardAggregatorSuite extends AnyFunSuite {
  private val Top = BigInteger.ONE.shiftLeft(128)
  private val Ms = 1000L * 1000

  private def even(n: Int, prefix: String = "shard"): ShardMap =
    ShardMap((0 until n).map(i => s"$prefix-$i" -> Top.multiply(BigInteger.valueOf(i)).divide(BigInteger.valueOf(n))))

  private final class Harness(
      maxBytes: Long = 1L << 20,
      maxRecords: Int = 100000,
      lingerMs: Long = 100,
      maxOpenBytes: Long = 1L << 30,
      var map: ShardMap = even(4)) {
    val sent = ArrayBuffer.empty[PendingRecord]
    val aggregator =
      new ShardAggregator(maxBytes, maxRecords, lingerMs * Ms, maxOpenBytes, map, () => map, _ => map, sent += _, 0L)

    /** What a reader finds: (shard the record was sent to, partition key, data, explicit hash key). */
    def users: Seq[(String, String, String)] = sent.toSeq.flatMap { r =>
      if (r.packed == null) Seq((r.partitionKey, r.entry.partitionKey(), r.entry.data().asUtf8String()))
      else KplDeaggregator.split(ShardKey("s", r.partitionKey), "1", 0L, r.entry.data().asByteArray())
        .map(u => (r.partitionKey, u.partitionKey, new String(u.data, "UTF-8")))
    }
  }

  private def records(n: Int, keys: Int = 20): Seq[UserEntry] =
    (0 until n).map(i => UserEntry(s"key-${i % keys}", null, s"record-$i".getBytes("UTF-8")))

  test("records are packed per shard: every record of an aggregate maps to the shard its explicit hash key names") {
    val h = new Harness()
    val input = records(400)
    input.foreach(h.aggregator.add(_, 0L))
    assert(h.sent.isEmpty, "nothing is full and nothing has waited its linger")
    h.aggregator.sealAll()
    assert(h.sent.size == 4 && h.sent.forall(_.packed != null))
    for (r <- h.sent) {
      val shard = h.map.shardIds(h.map.shardOf(r.entry))
      assert(shard == r.partitionKey && shard == r.packed.shardId, "the aggregate goes to the shard it was packed for")
      r.packed.entries.asScala.foreach(u => assert(h.map.shardIds(h.map.shardOf(u.partitionKey, null)) == shard))
      assert(r.entry.partitionKey() == r.packed.entries.get(0).partitionKey)
      assert(r.size == r.entry.data().asByteArray().length + r.entry.partitionKey().length)
    }
    // Every record once, and each key's records in input order.
    val read = h.users
    assert(read.map(_._3).sorted == input.map(e => new String(e.data, "UTF-8")).sorted)
    read.groupBy(_._2).foreach { case (key, rs) =>
      val seq = rs.map(_._3.stripPrefix("record-").toInt)
      assert(seq == seq.sorted, s"$key out of order")
    }
  }

  test("an aggregate is sealed before the next record would pass maxBytes or when it holds maxRecords") {
    val bytes = new Harness(maxBytes = 1500, map = even(1))
    records(500).foreach(bytes.aggregator.add(_, 0L))
    bytes.aggregator.sealAll()
    assert(bytes.sent.size > 5)
    bytes.sent.foreach(r =>
      assert(r.size <= 1500 && r.size == r.entry.data().asByteArray().length + r.entry.partitionKey().length))
    // Full means full: the first record of the next aggregate would not have fitted.
    bytes.sent.toSeq.sliding(2).foreach { pair =>
      val (a, b) = (pair(0), pair(1))
      val grown = new KplAggregate
      a.packed.entries.forEach(u => grown.add(u))
      assert(grown.encodedSizeWith(b.packed.entries.get(0)) + a.entry.partitionKey().length > 1500)
    }
    val count = new Harness(maxRecords = 7, map = even(1))
    records(21).foreach(count.aggregator.add(_, 0L))
    assert(count.sent.map(_.userRecords) == Seq(7, 7, 7), "sealed as soon as full, without waiting")
  }

  test("a record too large to pack goes alone, after what its shard gathered before it; one record goes plain") {
    val h = new Harness(maxBytes = 1100, map = even(1))
    h.aggregator.add(UserEntry("k", null, "a".getBytes), 0L)
    h.aggregator.add(UserEntry("k", null, "b".getBytes), 0L)
    h.aggregator.add(UserEntry("k", "5", Array.fill(1090)('x'.toByte)), 0L)
    h.aggregator.add(UserEntry("k", "7", "c".getBytes), 0L)
    h.aggregator.sealAll()
    assert(h.sent.map(_.userRecords) == Seq(2, 1, 1))
    assert(h.sent(1).packed == null && h.sent(1).entry.explicitHashKey() == "5")
    assert(
      h.sent(2).packed == null && h.sent(2).entry.data().asUtf8String() == "c" &&
        h.sent(2).entry.explicitHashKey() == "7",
      "a lone record is sent as itself, explicit hash key kept"
    )
    assert(h.users.map(_._3.take(1)) == Seq("a", "b", "x", "c"))
  }

  test("records with and without an explicit hash key never share an aggregate; a key keeps its order across both") {
    val h = new Harness(map = even(1))
    Seq(("a", null), ("b", null), ("c", "1"), ("d", null), ("e", "2"), ("a", "3"), ("f", null))
      .foreach { case (k, ehk) => h.aggregator.add(UserEntry(k, ehk, k.getBytes), 0L) }
    h.aggregator.sealAll()
    def keys(r: PendingRecord) =
      if (r.packed == null) r.entry.partitionKey() else r.packed.entries.asScala.map(_.partitionKey).mkString
    // "a" with a hash key follows "a" without one: the aggregate holding the first leaves before the second joins.
    val sent = h.sent.map(keys)
    assert(sent.toSet == Set("abd", "cea", "f") && sent.indexOf("abd") < sent.indexOf("cea"))
    assert(h.sent(sent.indexOf("cea")).packed.entries.asScala.forall(_.explicitHashKey != null))
  }

  test("a trickle is not held back: an aggregate leaves once it has waited the linger, when the next record comes") {
    val h = new Harness(lingerMs = 100, map = even(1))
    h.aggregator.add(UserEntry("a", null, "1".getBytes), 0L)
    h.aggregator.add(UserEntry("b", null, "2".getBytes), 50 * Ms)
    h.aggregator.expire(99 * Ms)
    assert(h.sent.isEmpty)
    h.aggregator.add(UserEntry("c", null, "3".getBytes), 100 * Ms)
    assert(h.sent.map(_.userRecords) == Seq(2) && h.aggregator.hasOpen)
    h.aggregator.expire(200 * Ms)
    assert(h.sent.map(_.userRecords) == Seq(2, 1) && !h.aggregator.hasOpen)
  }

  test("open aggregates past maxOpenBytes are all sealed: memory is bounded however many shards there are") {
    val h = new Harness(maxOpenBytes = 4000, map = even(64))
    records(2000, keys = 500).foreach(h.aggregator.add(_, 0L))
    assert(h.sent.nonEmpty)
    h.aggregator.sealAll()
    assert(h.users.size == 2000)
  }

  test("a reshard: open aggregates of a closed shard are placed again under the new map, none lost or misplaced") {
    val h = new Harness(map = even(2))
    records(200).foreach(h.aggregator.add(_, 0L))
    // shard-0 splits at a quarter; shard-1 stays.
    val quarter = Top.shiftRight(2)
    h.map = ShardMap(Seq("shard-2" -> BigInteger.ZERO, "shard-3" -> quarter, "shard-1" -> Top.shiftRight(1)))
    records(100).map(e => UserEntry(e.partitionKey, null, ("late-" + new String(e.data, "UTF-8")).getBytes))
      .foreach(h.aggregator.add(_, ShardAggregator.MapCheckNanos))
    h.aggregator.sealAll()
    assert(!h.sent.exists(_.partitionKey == "shard-0"))
    val read = h.users
    assert(read.size == 300)
    read.foreach { case (shard, key, _) => assert(h.map.shardIds(h.map.shardOf(key, null)) == shard, key) }
    read.groupBy(_._2).foreach { case (key, rs) =>
      assert(
        rs.map(_._3).filterNot(_.startsWith("late")) ++ rs.map(_._3).filter(_.startsWith("late")) == rs.map(_._3),
        s"$key: a record placed again overtook a later one"
      )
    }
  }

  test("an aggregate stored in a split child that does not hold all its records is sent again whole") {
    val h = new Harness(map = even(1))
    val input = records(200, keys = 200)
    input.foreach(h.aggregator.add(_, 0L))
    h.aggregator.sealAll()
    val stored = h.sent.head.packed
    h.sent.clear()
    h.map = ShardMap(Seq("low" -> BigInteger.ZERO, "high" -> Top.shiftRight(1)))
    h.aggregator.misplaced(stored, "low", 0L)
    h.aggregator.sealAll()
    // KCL drops the stored aggregate whole (some records lie outside "low"): every record must come again.
    val again = h.users
    assert(again.map(_._3).sorted == input.map(e => new String(e.data, "UTF-8")).sorted)
    again.foreach { case (shard, key, _) => assert(h.map.shardIds(h.map.shardOf(key, null)) == shard, key) }
    assert(again.map(_._1).toSet == Set("low", "high") && h.aggregator.rerouted == input.size)

    // Stored where every record belongs (a split child that holds them all, a merged shard): nothing again.
    val lowOnly = new Harness(map = h.map)
    input.foreach(lowOnly.aggregator.add(_, 0L))
    lowOnly.aggregator.sealAll()
    val low = lowOnly.sent.find(_.partitionKey == "low").get.packed
    h.sent.clear()
    h.aggregator.misplaced(low, "low", 0L)
    h.map = even(1, "merged")
    h.aggregator.misplaced(stored, "merged-0", 0L)
    h.aggregator.sealAll()
    assert(h.sent.isEmpty && h.aggregator.rerouted == input.size)
  }
}
