package io.github.sparkkinesis.source

import java.time.Instant

import io.github.sparkkinesis.options.OptionReader
import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{GetRecordsResponse, Record}
import io.github.sparkkinesis.source.executor.ShardReader

/** The loss rules that need no Kinesis: a trimmed resume record, and shards that expired unread. */
class DataLossSuite extends AnyFunSuite {
  private def config(failOnDataLoss: Boolean) =
    SourceConfig(OptionReader(Map("streamName" -> "orders", "failOnDataLoss" -> failOnDataLoss.toString)))
  private val key = ShardKey("orders", "shardId-000000000001")
  private val seq5 = "49" + "0" * 53 + "5"
  private val seq9 = "49" + "0" * 53 + "9"

  private def response(seqs: String*)(next: String = "it", behind: Long = 1000) = GetRecordsResponse.builder()
    .records(seqs.map(s =>
      Record.builder().sequenceNumber(s).partitionKey("k").data(SdkBytes.fromUtf8String("x"))
        .approximateArrivalTimestamp(Instant.EPOCH).build()): _*)
    .nextShardIterator(next).millisBehindLatest(behind).build()

  test("a resume finds its own record first: nothing lost") {
    assert(ShardReader.resumeRecord(After(seq5, 0)) == Some(seq5))
    assert(ShardReader.checkResumed(config(true), key, After(seq5, 0), seq5, response(seq5, seq9)()).isEmpty)
  }

  test("a resume whose record was trimmed fails naming stream, shard, positions and the option to skip") {
    val e = intercept[IllegalStateException](
      ShardReader.checkResumed(config(true), key, After(seq5, 0), seq5, response(seq9)()))
    for (part <-
        Seq("'orders'", "shardId-000000000001", s"after sequence number $seq5", seq9, "failOnDataLoss=false")) {
      assert(e.getMessage.contains(part), e.getMessage)
    }
    assert(
      ShardReader.checkResumed(config(false), key, After(seq5, 0), seq5, response(seq9)()).isEmpty,
      "failOnDataLoss=false warns and goes on with the records left"
    )
  }

  test("the check waits for the first record, and ends quietly at the tip or the shard's end") {
    assert(ShardReader.checkResumed(config(true), key, After(seq5, 0), seq5, response()()) == Some(seq5))
    assert(ShardReader.checkResumed(config(true), key, After(seq5, 0), seq5, response()(behind = 0)).isEmpty)
    assert(ShardReader.checkResumed(config(true), key, After(seq5, 0), seq5, response()(next = null)).isEmpty)
  }

  test("positions given in initialPosition need not name a record and are not checked") {
    assert(ShardReader.resumeRecord(After(seq5, -1)).isEmpty)
    assert(ShardReader.resumeRecord(After(seq5, Long.MaxValue)).isEmpty)
    assert(ShardReader.resumeRecord(TrimHorizon).isEmpty && ShardReader.resumeRecord(AtTimestamp(1)).isEmpty)
  }
}
