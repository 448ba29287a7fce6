package io.github.sparkkinesis.sql

import java.time.Instant

import io.github.sparkkinesis.options.KinesisOptionException
import org.apache.spark.sql.catalyst.expressions.{Add, AttributeReference, Expression, Literal, NamedArgumentExpression}
import org.apache.spark.sql.types.StringType
import org.scalatest.funsuite.AnyFunSuite

class FunctionArgumentsSuite extends AnyFunSuite {
  private def named(key: String, value: Expression) = NamedArgumentExpression(key, value)
  private def options(arguments: Expression*) = FunctionArguments.options("read_kinesis", arguments)
  private def failure(arguments: Expression*) = intercept[KinesisOptionException](options(arguments: _*)).getMessage

  test("named constants become the option strings format(\"kinesis\") parses; names keep their case") {
    val got = options(
      named("streamName", Literal("orders")),
      named("MaxRecordsPerFetch", Add(Literal(250), Literal(250))),
      named("failOnDataLoss", Literal(false)),
      named("maxFetchRate", Literal(BigDecimal("1.5"))),
      named("initialTimestamp", Literal(Instant.parse("2024-05-01T12:00:00.123Z")))
    )
    assert(got == Map(
      "streamName" -> "orders",
      "MaxRecordsPerFetch" -> "500",
      "failOnDataLoss" -> "false",
      "maxFetchRate" -> "1.5",
      "initialTimestamp" -> Instant.parse("2024-05-01T12:00:00.123Z").toEpochMilli.toString
    ))
  }

  test("positional, repeated, NULL, non-constant and complex arguments fail naming the parameter") {
    assert(failure(Literal("orders")).contains("read_kinesis takes named parameters only"))
    assert(failure(named("region", Literal("eu-west-1")), named("REGION", Literal("us-east-1")))
      .contains("Parameter 'region' of read_kinesis is given more than once (region, REGION)"))
    assert(failure(named("region", Literal(null, StringType))).contains("Parameter 'region' of read_kinesis is NULL"))
    assert(failure(named("streamName", AttributeReference("name", StringType)())).contains(
      "'streamName' of read_kinesis must be a constant"))
    assert(failure(named("shardsPerTask", Literal.create(Array(1, 2)))).contains(
      "Parameter 'shardsPerTask' of read_kinesis has type ARRAY<INT>: expected a string, a number, a boolean or a timestamp"))
  }

  test("printable masks secret values") {
    val printed = FunctionArguments.printable(Map("streamName" -> "orders", "awsSecretKey" -> "marker-9"))
    assert(printed.contains("streamName => orders") && printed.contains("awsSecretKey => ***") && !printed.contains(
      "marker-9"))
  }

}
