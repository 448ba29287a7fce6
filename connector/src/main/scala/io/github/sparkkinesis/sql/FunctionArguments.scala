package io.github.sparkkinesis.sql

import java.util.Locale

import io.github.sparkkinesis.options.{KinesisOptionException, OptionReader}
import org.apache.spark.sql.catalyst.expressions.{Expression, NamedArgumentExpression}
import org.apache.spark.sql.types._

/**
 * The arguments of a call such as `read_kinesis(streamName => 'orders', maxRecordsPerFetch => 500)` as the option
 * map `spark.read.format("kinesis").options(...)` would get: parameter names are option keys, values become the
 * strings the options parse. Messages never carry a secret's value, and neither do they quote the SQL text.
 */
object FunctionArguments {
  def options(function: String, arguments: Seq[Expression]): Map[String, String] = {
    val named = arguments.zipWithIndex.map {
      case (NamedArgumentExpression(key, value), _) => key -> value
      case (_, i) => throw new KinesisOptionException(s"$function takes named parameters only (the options of " +
          s"""format("kinesis")), e.g. $function(streamName => 'my-stream', region => 'eu-west-1'); argument ${i + 1} has no name.""")
    }
    named.groupBy(_._1.toLowerCase(Locale.ROOT)).values.find(_.size > 1).foreach { twice =>
      throw new KinesisOptionException(
        s"Parameter '${twice.head._1}' of $function is given more than once (${twice.map(_._1).mkString(", ")}); names are case-insensitive.")
    }
    named.map { case (key, value) => key -> text(function, key, value) }.toMap
  }

  /** Timestamps become epoch millis, which `initialTimestamp` accepts; other atomic values their usual text. */
  private def text(function: String, key: String, value: Expression): String = {
    if (!value.foldable) {
      throw new KinesisOptionException(
        s"Parameter '$key' of $function must be a constant (a literal or an expression " +
          "of literals), not a column or a subquery.")
    }
    val v = value.eval()
    if (v == null) {
      throw new KinesisOptionException(s"Parameter '$key' of $function is NULL: give it a value or leave it out.")
    }
    value.dataType match {
      case TimestampType => Math.floorDiv(v.asInstanceOf[Long], 1000L).toString
      case _: StringType | BooleanType | ByteType | ShortType | IntegerType | LongType | _: DecimalType | FloatType |
          DoubleType => v.toString
      case other => throw new KinesisOptionException(
          s"Parameter '$key' of $function has type ${other.sql}: expected a string, a number, a boolean or a timestamp.")
    }
  }

  /** The map as it may be printed: secret values masked. */
  def printable(options: Map[String, String]): String =
    OptionReader.redact(options).map { case (k, v) => s"$k => $v" }.mkString(", ")
}
