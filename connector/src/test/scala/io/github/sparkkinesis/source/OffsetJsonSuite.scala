package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite

class OffsetJsonSuite extends AnyFunSuite {
  private val offset = KinesisSourceOffset(Map(
    ShardKey("orders", "shardId-000000000000") -> After("49590338271490256608559692538361571095921575989136588898", 3),
    ShardKey("orders", "shardId-000000000001") -> AtTimestamp(1763760000000L),
    ShardKey("orders", "shardId-000000000002") -> TrimHorizon,
    ShardKey("clicks", "shardId-000000000003") -> ShardEnd))

  test("offsets are readable JSON, per stream and shard, and read back to the same offset") {
    assert(offset.json == """{"version":1,"streams":{"clicks":{"shardId-000000000003":{"shard_end":true}},""" +
      """"orders":{"shardId-000000000000":{"after":"49590338271490256608559692538361571095921575989136588898","sub":3},""" +
      """"shardId-000000000001":{"at_timestamp":1763760000000},"shardId-000000000002":{"trim_horizon":true}}}}""")
    assert(KinesisSourceOffset.fromJson(offset.json) == offset)
  }

  test("an offset from another connector or version is refused with what was expected and found") {
    val e = intercept[IllegalArgumentException](KinesisSourceOffset.fromJson("""{"shardId-0":"123"}"""))
    assert(e.getMessage.contains("version -1; this connector reads version 1"))
    assert(e.getMessage.contains("""found: {"shardId-0":"123"}"""))
    assert(intercept[IllegalArgumentException](KinesisSourceOffset.fromJson("not json")).getMessage.contains("Expected"))
  }

  test("sequence numbers compare as numbers, sub-sequence numbers break ties") {
    assert(SequenceNumbers.compare("9", "10") < 0)
    assert(SequenceNumbers.compare("49590338271490256608559692538361571095921575989136588898",
      "49590338271490256608559692538361571095921575989136588899") < 0)
    assert(SequenceNumbers.isAfter(After("10", 2), "10", 3))
    assert(!SequenceNumbers.isAfter(After("10", 2), "10", 2))
    assert(SequenceNumbers.isAfter(After("10", -1), "10", 0), "at_sequence_number includes the record itself")
    assert(!SequenceNumbers.isAfter(After("10", Long.MaxValue), "10", 5), "after_sequence_number skips all of it")
    assert(!SequenceNumbers.isAfter(ShardEnd, "11", 0))
    assert(RecordBlock.of(Seq(UserRecord("k", Array.empty, "9", 7, 0))).compareTo(0, After("10", 2)) < 0)
  }
}
