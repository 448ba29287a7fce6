package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.executor.{RecordBlock, SequenceNumbers, UserRecord}

class OffsetJsonSuite extends AnyFunSuite {
  private val offset = KinesisSourceOffset(Map(
    ShardKey("orders", "shardId-000000000000") -> After("49590338271490256608559692538361571095921575989136588898", 3),
    ShardKey("orders", "shardId-000000000001") -> AtTimestamp(1763760000000L),
    ShardKey("orders", "shardId-000000000002") -> TrimHorizon,
    ShardKey("clicks", "shardId-000000000003") -> ShardEnd
  ))

  test("offsets are readable JSON, per stream and shard, and read back to the same offset") {
    assert(offset.json == """{"version":1,"streams":{"clicks":{"shardId-000000000003":{"shard_end":true}},""" +
      """"orders":{"shardId-000000000000":{"after":"49590338271490256608559692538361571095921575989136588898","sub":3},""" +
      """"shardId-000000000001":{"at_timestamp":1763760000000},"shardId-000000000002":{"trim_horizon":true}}}}""")
    assert(KinesisSourceOffset.fromJson(offset.json) == offset)
  }

  test("an offset from another connector is refused with what was expected and found") {
    val e = intercept[IllegalArgumentException](KinesisSourceOffset.fromJson("""{"shardId-0":"123"}"""))
    assert(e.getMessage.contains("no 'version' field: was the checkpoint written by another connector?"))
    assert(e.getMessage.contains("""found: {"shardId-0":"123"}"""))
    assert(intercept[IllegalArgumentException](KinesisSourceOffset.fromJson("not json")).getMessage.contains("Expected"))
    val zero = intercept[IllegalArgumentException](KinesisSourceOffset.fromJson("""{"version":0,"streams":{}}"""))
    assert(zero.getMessage.contains("version 0; this connector reads versions 1 to 1"))
  }

  test("an offset of a newer version is refused naming the version found, the version read, and what to do") {
    val newer = offset.json.replace(""""version":1""", """"version":2""")
    val e = intercept[IllegalArgumentException](KinesisSourceOffset.fromJson(newer))
    assert(e.getMessage == "This Kinesis source checkpoint was written by a newer version of spark-kinesis: its " +
      "offset is version 2, and this connector reads offset versions up to 1. Resume the query with a spark-kinesis " +
      "that reads version 2, or start it on a new checkpoint location (it then starts from initialPosition). " +
      s"Offset found: $newer")
    val manyShards =
      KinesisSourceOffset((0 until 1000).map(i => ShardKey("orders", f"shardId-$i%012d") -> TrimHorizon).toMap)
    val long = intercept[IllegalArgumentException](KinesisSourceOffset.fromJson(manyShards.json.replace(
      """"version":1""",
      """"version":7"""))).getMessage
    assert(long.contains("offset is version 7") && long.contains(s"... (${manyShards.json.length} characters)"))
    assert(long.length < 1000, "a thousand shards need not be in the message")
  }

  test("version 1 is read however it was written: a number, or the string \"1\" this reader always took") {
    assert(KinesisSourceOffset.fromJson(offset.json.replace(""""version":1""", """"version":"1"""")) == offset)
    assert(
      KinesisSourceOffset.Version == 1,
      "a new version needs fixtures and a reader of the old ones: see " +
        "docs/design/offsets.md, Versioning")
  }

  test("sequence numbers compare as numbers, sub-sequence numbers break ties") {
    assert(SequenceNumbers.compare("9", "10") < 0)
    assert(SequenceNumbers.compare(
      "49590338271490256608559692538361571095921575989136588898",
      "49590338271490256608559692538361571095921575989136588899") < 0)
    assert(SequenceNumbers.isAfter(After("10", 2), "10", 3))
    assert(!SequenceNumbers.isAfter(After("10", 2), "10", 2))
    assert(SequenceNumbers.isAfter(After("10", -1), "10", 0), "at_sequence_number includes the record itself")
    assert(!SequenceNumbers.isAfter(After("10", Long.MaxValue), "10", 5), "after_sequence_number skips all of it")
    assert(!SequenceNumbers.isAfter(ShardEnd, "11", 0))
    assert(RecordBlock.of(Seq(UserRecord("k", Array.empty, "9", 7, 0))).compareTo(0, After("10", 2)) < 0)
  }

  test("a wide offset is written with streams by name and shards by id, as a JSON tree writes it, and reads back") {
    val random = new scala.util.Random(7)
    val wide = KinesisSourceOffset((0 until 3000).map { i =>
      val position = i % 4 match {
        case 0 => After(BigInt(190, random).toString, random.nextInt(5).toLong)
        case 1 => AtTimestamp(1763760000000L + i)
        case 2 => TrimHorizon
        case _ => ShardEnd
      }
      ShardKey(if (i % 3 == 0) "clicks" else "orders\"q", f"shardId-${random.nextInt(100000)}%012d") -> position
    }.toMap)
    // The layout the connector has always written: a tree, streams and shards sorted.
    val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
    val root = mapper.createObjectNode()
    root.put("version", 1)
    val streams = root.putObject("streams")
    for ((stream, shards) <- wide.positions.groupBy(_._1.stream).toSeq.sortBy(_._1)) {
      val node = streams.putObject(stream)
      for ((key, position) <- shards.toSeq.sortBy(_._1.shardId)) {
        val shard = node.putObject(key.shardId)
        position match {
          case After(seq, sub) => shard.put("after", seq); shard.put("sub", sub)
          case AtTimestamp(ms) => shard.put("at_timestamp", ms)
          case TrimHorizon => shard.put("trim_horizon", true)
          case ShardEnd => shard.put("shard_end", true)
        }
      }
    }
    assert(wide.json == mapper.writeValueAsString(root))
    assert(KinesisSourceOffset.fromJson(wide.json) == wide)
  }
}
