package io.github.sparkkinesis.simulator

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model._

/** Request authentication, as the AWS SDK meets it: a good signature passes, each refusal is AWS's exception. */
class SdkAuthSuite extends AnyFunSuite with SimulatorFixture {
  private def client(keyId: String, secret: String) = SdkClients.kinesis(server.endpoint, keyId = keyId, secret = secret)

  override protected def afterEach(): Unit = try admin.clearAuth() finally super.afterEach()

  test("known key and right secret pass; unknown key, wrong secret and a denied operation are refused") {
    val stream = newStreamName("auth")
    createStream(stream, 1)
    admin.auth("""{"keys": {"AKIDREADER": {"secret": "reader-secret", "deny": ["PutRecord"]}}}""")
    val reader = client("AKIDREADER", "reader-secret")
    try {
      assert(reader.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().size == 1)
      val denied = intercept[KinesisException](reader.putRecord(PutRecordRequest.builder().streamName(stream)
        .partitionKey("k").data(software.amazon.awssdk.core.SdkBytes.fromUtf8String("v")).build()))
      assert(denied.awsErrorDetails().errorCode() == "AccessDeniedException")
      assert(denied.getMessage.contains("kinesis:PutRecord ") && denied.getMessage.contains(s"stream/$stream"))
    } finally reader.close()
    def refusal(keyId: String, secret: String): String = {
      val c = client(keyId, secret)
      try intercept[KinesisException](c.listShards(ListShardsRequest.builder().streamName(stream).build()))
        .awsErrorDetails().errorCode()
      finally c.close()
    }
    assert(refusal("AKIDUNKNOWN", "reader-secret") == "UnrecognizedClientException")
    assert(refusal("AKIDREADER", "wrong-secret") == "InvalidSignatureException")
    admin.clearAuth()
    val anyone = client("AKIDUNKNOWN", "x")
    try assert(anyone.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().size == 1, "auth off")
    finally anyone.close()
  }
}
