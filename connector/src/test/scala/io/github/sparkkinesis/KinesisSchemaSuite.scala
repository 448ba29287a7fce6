package io.github.sparkkinesis

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

class KinesisSchemaSuite extends AnyFunSuite {
  test("the source schema is the one SPEC §2 promises, in order") {
    val expected = Seq(
      "partitionKey" -> StringType, "data" -> BinaryType, "stream" -> StringType, "shardId" -> StringType,
      "sequenceNumber" -> StringType, "approximateArrivalTimestamp" -> TimestampType, "subSequenceNumber" -> LongType)
    assert(KinesisSchema.schema.fields.map(f => f.name -> f.dataType).toSeq == expected)
  }

  test("the provider registers the short name 'kinesis' and reports the source schema") {
    val provider = new KinesisProvider
    assert(provider.shortName() == "kinesis")
    assert(provider.inferSchema(org.apache.spark.sql.util.CaseInsensitiveStringMap.empty()) == KinesisSchema.schema)
  }
}
