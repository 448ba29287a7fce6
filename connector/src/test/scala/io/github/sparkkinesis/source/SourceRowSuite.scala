package io.github.sparkkinesis.source

import java.nio.charset.StandardCharsets.UTF_8

import io.github.sparkkinesis.RowLayout
import io.github.sparkkinesis.options.OptionReader
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.executor.{RecordBlock, SourceRow, UserRecord}

/** The partition readers' row, filled by ordinal for either layout. */
class SourceRowSuite extends AnyFunSuite {
  private val arn = "arn:aws:kinesis:us-east-1:123456789012:stream/clicks"
  private val key = ShardKey("clicks", "shardId-000000000001")
  private val block = RecordBlock.of(Seq(UserRecord("user-1", "payload".getBytes(UTF_8), "4959001", 3L, 1700000000123L)))

  private def filled(config: SourceConfig): SourceRow = {
    val out = new SourceRow(config.layout)
    out.shard(SourceRow.shardColumns(config, key))
    out.record(block, 0)
    out
  }

  test("kinesis: our seven columns; the stream column holds the name given") {
    val row = filled(SourceConfig(OptionReader(Map("streamName" -> "clicks")))).row
    assert(row.numFields == 7)
    assert(row.getUTF8String(0).toString == "user-1" && new String(row.getBinary(1), UTF_8) == "payload")
    assert(row.getUTF8String(2).toString == "clicks" && row.getUTF8String(3).toString == "shardId-000000000001")
    assert(row.getUTF8String(4).toString == "4959001" && row.getLong(5) == 1700000000123000L && row.getLong(6) == 3L)
  }

  test("aws-kinesis: the AWS Labs five columns; the stream column holds the ARN given by streamARN alone") {
    val config = SourceConfig(OptionReader(Map("streamARN" -> arn))).copy(layout = RowLayout.AwsKinesis)
    val out = filled(config)
    val row = out.row
    assert(row.numFields == 5)
    assert(new String(row.getBinary(0), UTF_8) == "payload" && row.getUTF8String(1).toString == arn)
    assert(row.getUTF8String(2).toString == "user-1" && row.getUTF8String(3).toString == "4959001")
    assert(row.getLong(4) == 1700000000123000L)
    assert(out.records == 1 && out.bytes == block.recordBytes(0))
  }
}
