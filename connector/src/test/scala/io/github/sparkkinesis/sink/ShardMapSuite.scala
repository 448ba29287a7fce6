package io.github.sparkkinesis.sink

import java.math.BigInteger
import java.security.MessageDigest

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry
import io.github.sparkkinesis.sink.executor.ShardMap

class ShardMapSuite extends AnyFunSuite {
  private val Top = BigInteger.ONE.shiftLeft(128)

  /** `n` shards splitting the hash-key space evenly, as CreateStream does. */
  private def even(n: Int): ShardMap =
    ShardMap((0 until n).map(i => f"shardId-$i%012d" -> Top.multiply(BigInteger.valueOf(i)).divide(BigInteger.valueOf(n))))

  private def entry(key: String, explicit: String = null) = {
    val b = PutRecordsRequestEntry.builder().partitionKey(key).data(SdkBytes.fromUtf8String("x"))
    if (explicit != null) b.explicitHashKey(explicit)
    b.build()
  }

  /** Kinesis's rule, written the slow way: the MD5 of the key as an unsigned number, in the range that holds it. */
  private def expected(map: ShardMap, starts: Seq[BigInteger], key: String): Int = {
    val hash = new BigInteger(1, MessageDigest.getInstance("MD5").digest(key.getBytes("UTF-8")))
    starts.lastIndexWhere(_.compareTo(hash) <= 0)
  }

  test("a partition key goes to the shard whose range holds the MD5 of its UTF-8 bytes") {
    for (n <- Seq(1, 2, 3, 16, 1000)) {
      val map = even(n)
      val starts = (0 until n).map(i => Top.multiply(BigInteger.valueOf(i)).divide(BigInteger.valueOf(n)))
      for (k <- (0 until 2000).map(i => s"key-$i") :+ "ünïcødé" :+ ("x" * 256)) {
        assert(map.shardOf(entry(k)) == expected(map, starts, k), s"$n shards, key $k")
      }
    }
  }

  test("an explicit hash key wins over the partition key; range ends are inclusive starts") {
    val map = even(4)
    val quarter = Top.shiftRight(2)
    assert(map.shardOf(entry("k", "0")) == 0)
    assert(map.shardOf(entry("k", quarter.subtract(BigInteger.ONE).toString)) == 0)
    assert(map.shardOf(entry("k", quarter.toString)) == 1)
    assert(map.shardOf(entry("k", quarter.multiply(BigInteger.valueOf(3)).toString)) == 3)
    assert(map.shardOf(entry("k", Top.subtract(BigInteger.ONE).toString)) == 3, "2^128 - 1 is in the last shard")
  }

  test("shards listed out of order are sorted by their range; ids are looked up") {
    val half = Top.shiftRight(1)
    val map = ShardMap(Seq("shardId-b" -> half, "shardId-a" -> BigInteger.ZERO))
    assert(map.shardIds.toSeq == Seq("shardId-a", "shardId-b"))
    assert(map.indexOf("shardId-b") == 1 && map.indexOf("shardId-zzz") == -1)
    assert(map.shardOf(entry("k", half.toString)) == 1 && map.shardOf(entry("k", "1")) == 0)
  }

  test("ranges split below 2^64 are told apart by the low half of the key") {
    val map = ShardMap(Seq("a" -> BigInteger.ZERO, "b" -> BigInteger.valueOf(1000), "c" -> BigInteger.ONE.shiftLeft(64)))
    assert(map.shardOf(entry("k", "999")) == 0 && map.shardOf(entry("k", "1000")) == 1)
    assert(map.shardOf(entry("k", BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE).toString)) == 1)
    assert(map.shardOf(entry("k", BigInteger.ONE.shiftLeft(64).toString)) == 2)
  }
}
