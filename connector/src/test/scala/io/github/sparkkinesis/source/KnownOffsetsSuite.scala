package io.github.sparkkinesis.source

import io.github.sparkkinesis.source.ShardPosition._
import io.github.sparkkinesis.source.driver.KnownOffsets
import org.scalatest.funsuite.AnyFunSuite

class KnownOffsetsSuite extends AnyFunSuite {
  private def offset(seq: Int) = KinesisSourceOffset(Map(
    ShardKey("orders", "shardId-000000000000") -> After(s"4959033827149025660855969253836157109592157598913658${seq}", 0),
    ShardKey("orders", "shardId-000000000001") -> AtTimestamp(1763760000000L),
    ShardKey("orders", "shardId-000000000002") -> TrimHorizon
  ))

  test("the offset a batch ended at is found again by its JSON, not parsed into another object") {
    val known = new KnownOffsets(4)
    val end = known.remember(offset(1))
    assert(known.parse(end.json) eq end)
    // Spark hands the JSON back as a copy when it read it from the offset log.
    assert(known.parse(new String(end.json.toCharArray)) eq end)
  }

  test("a JSON read once is parsed once: the same offset comes back for it, equal to a parse") {
    val known = new KnownOffsets(4)
    val json = offset(2).json
    val first = known.parse(json)
    assert(first == KinesisSourceOffset.fromJson(json))
    assert(known.parse(json) eq first)
  }

  test("another JSON of the same positions (an older writer's layout) is parsed, to an equal offset") {
    val known = new KnownOffsets(4)
    val end = known.remember(offset(3))
    val lenient = end.json.replace(""""version":1""", """"version":"1"""")
    val parsed = known.parse(lenient)
    assert(parsed == end && !(parsed eq end))
  }

  test("only the newest offsets are kept") {
    val known = new KnownOffsets(2)
    val oldest = known.remember(offset(4))
    known.remember(offset(5))
    known.remember(offset(6))
    val again = known.parse(oldest.json)
    assert(again == oldest && !(again eq oldest))
  }

  test("a JSON that is not an offset fails as a parse does") {
    val e = intercept[IllegalArgumentException](new KnownOffsets(4).parse("""{"shardId-0":"123"}"""))
    assert(e.getMessage.contains("no 'version' field"))
  }
}
