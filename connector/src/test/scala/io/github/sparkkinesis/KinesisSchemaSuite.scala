package io.github.sparkkinesis

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

class KinesisSchemaSuite extends AnyFunSuite {
  test("the source schema is the one SPEC §2 promises, in order") {
    val expected = Seq(
      "partitionKey" -> StringType,
      "data" -> BinaryType,
      "stream" -> StringType,
      "shardId" -> StringType,
      "sequenceNumber" -> StringType,
      "approximateArrivalTimestamp" -> TimestampType,
      "subSequenceNumber" -> LongType
    )
    assert(KinesisSchema.schema.fields.map(f => f.name -> f.dataType).toSeq == expected)
  }

  test("the provider registers the short name 'kinesis' and reports the source schema") {
    val provider = new KinesisProvider
    assert(provider.shortName() == "kinesis")
    assert(provider.inferSchema(org.apache.spark.sql.util.CaseInsensitiveStringMap.empty()) == KinesisSchema.schema)
  }

  test("'aws-kinesis' reports the AWS Labs connector's columns, in its order, with its types and nullability") {
    val provider = new AwsKinesisProvider
    assert(provider.shortName() == "aws-kinesis")
    val schema = provider.inferSchema(org.apache.spark.sql.util.CaseInsensitiveStringMap.empty())
    assert(schema.fields.map(f => (f.name, f.dataType, f.nullable)).toSeq == Seq(
      ("data", BinaryType, true),
      ("streamName", StringType, true),
      ("partitionKey", StringType, true),
      ("sequenceNumber", StringType, true),
      ("approximateArrivalTimestamp", TimestampType, true)
    ))
  }

  test("each layout places every value at its column's ordinal, -1 for a column it lacks") {
    val ours = RowLayout.Kinesis
    assert(Seq(
      ours.partitionKey,
      ours.data,
      ours.stream,
      ours.shardId,
      ours.sequenceNumber,
      ours.approximateArrivalTimestamp,
      ours.subSequenceNumber) == (0 to 6))
    val aws = RowLayout.AwsKinesis
    assert(Seq(aws.data, aws.stream, aws.partitionKey, aws.sequenceNumber, aws.approximateArrivalTimestamp) == (0 to 4))
    assert(aws.shardId == -1 && aws.subSequenceNumber == -1)
  }

  test("both short names are registered as data sources") {
    val registered = scala.io.Source.fromInputStream(
      getClass.getResourceAsStream(
        "/META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"),
      "UTF-8").getLines().map(_.trim).filter(_.nonEmpty).toList
    assert(registered == List(classOf[KinesisProvider].getName, classOf[AwsKinesisProvider].getName))
  }
}
