package io.github.sparkkinesis.sql

import io.github.sparkkinesis.SparkClasses
import org.apache.spark.sql.catalyst.analysis.{NamedStreamingRelation, UnresolvedLeafNode}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap

/** A call of one of our table functions, with its checked options, until it is known to be a batch or a stream. */
final case class KinesisFunctionCall(function: KinesisFunction, options: Map[String, String]) extends UnresolvedLeafNode {
  // Plans are printed (errors, logs, explain): never with a secret.
  override protected def stringArgs: Iterator[Any] =
    Iterator(s"${function.name}(${FunctionArguments.printable(options)})")

  /** What `spark.read.format(...)`/`spark.readStream.format(...)` with these options builds; Spark resolves it. */
  def dataSource(streaming: Boolean): LogicalPlan = {
    if (streaming && !function.streams) {
      throw new IllegalArgumentException(s"${function.name} cannot be read as a stream: use it without STREAM, " +
        s"e.g. SELECT * FROM ${function.name}(streamName => 'my-stream').")
    }
    val read = if (streaming) options else function.batchOptions(options)
    UnresolvedDataSource(function.format, None, CaseInsensitiveMap(read), streaming, Nil)
  }
}

/**
 * `FROM STREAM f(...)` (Spark 4.1+) parses to the call wrapped in a [[NamedStreamingRelation]], which is all that
 * tells it from `FROM f(...)`: the table function builder itself is given only the arguments. Spark 4.0 has neither
 * the syntax nor that class, and a rule naming it would fail on every plan there: its calls are all batch reads.
 */
object ResolveKinesisFunctions extends Rule[LogicalPlan] {
  private lazy val streams: Option[Rule[LogicalPlan]] =
    if (SparkClasses.has("org.apache.spark.sql.catalyst.analysis.NamedStreamingRelation"))
      Some(ResolveKinesisStreamFunctions)
    else None

  override def apply(plan: LogicalPlan): LogicalPlan =
    streams.fold(plan)(_(plan)).resolveOperatorsDown { case call: KinesisFunctionCall =>
      call.dataSource(streaming = false)
    }
}

/** The calls under `STREAM`; loaded only where Spark has [[NamedStreamingRelation]] (see [[ResolveKinesisFunctions]]). */
private object ResolveKinesisStreamFunctions extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsDown {
    case stream @ NamedStreamingRelation(call: KinesisFunctionCall, _) =>
      stream.copy(child = call.dataSource(streaming = true))
  }
}
