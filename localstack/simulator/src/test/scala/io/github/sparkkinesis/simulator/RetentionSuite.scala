package io.github.sparkkinesis.simulator

import java.nio.charset.StandardCharsets.UTF_8
import java.util.Base64

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

/** Retention as reads see it, on the simulator's own clock: no record past it is served, whenever shards were trimmed. */
class RetentionSuite extends AnyFunSuite {
  private val mapper = new ObjectMapper
  private val Shard0 = "shardId-000000000000"

  /** A simulator on a clock the test moves, with `retentionMillis` for every stream, and its API. */
  private final class Account(retentionMillis: Long) {
    var now = 1000000L
    val sim = new Simulator(Settings(quotas = QuotaSettings.off, retentionMillis = Some(retentionMillis)), clock = () => now)
    private val api = new KinesisApi(sim)
    def call(op: String, json: String): Out = api.call(op, new Req(mapper.readTree(json), cbor = false))

    def put(stream: String, data: String): Unit = call("PutRecord",
      s"""{"StreamName": "$stream", "PartitionKey": "k", "Data": "${Base64.getEncoder.encodeToString(data.getBytes(UTF_8))}"}""")

    /** Every record of the shard from its trim horizon, read now. */
    def read(stream: String): Seq[String] = {
      val iterator = field(call("GetShardIterator",
        s"""{"StreamName": "$stream", "ShardId": "$Shard0", "ShardIteratorType": "TRIM_HORIZON"}"""), "ShardIterator")
      field(call("GetRecords", s"""{"ShardIterator": "${iterator.asInstanceOf[Out.Str].value}"}"""), "Records") match {
        case Out.Records(records) => records.map(r => new String(r.data, UTF_8))
        case other => fail(s"Records: $other")
      }
    }
  }

  private def field(out: Out, name: String): Out = out match {
    case Out.Obj(fields) => fields.collectFirst { case (`name`, v) => v }.getOrElse(fail(s"no $name in $out"))
    case other => fail(s"not an object: $other")
  }

  test("a record past retention is not read, though every shard was trimmed less than TrimEveryMillis before") {
    val account = new Account(retentionMillis = 1000)
    account.call("CreateStream", """{"StreamName": "s", "ShardCount": 1}""")
    val put = account.now
    account.put("s", "old")
    account.now = put + 950 // every shard trimmed here (the first call since the clock moved): "old" has 50 ms left
    assert(account.read("s") == Seq("old"))
    account.now = put + 1010 // past its retention; the next trim of every shard is 40 ms away
    assert(account.read("s").isEmpty, "a record past retention was served")
  }
}
