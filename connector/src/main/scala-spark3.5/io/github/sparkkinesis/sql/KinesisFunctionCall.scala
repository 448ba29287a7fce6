package io.github.sparkkinesis.sql

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.UnresolvedLeafNode
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * A call of one of our table functions, with its checked options (the Spark 3.5 build; Spark 4's file of this name
 * also handles `FROM STREAM f(...)`, which Spark 3.5's SQL does not have: here every call is a batch read).
 */
final case class KinesisFunctionCall(function: KinesisFunction, options: Map[String, String]) extends UnresolvedLeafNode {
  // Plans are printed (errors, logs, explain): never with a secret.
  override protected def stringArgs: Iterator[Any] =
    Iterator(s"${function.name}(${FunctionArguments.printable(options)})")

  /** What `spark.read.format(...)` with these options reads, resolved (Spark 3.5 has no UnresolvedDataSource). */
  def dataSource(session: SparkSession): LogicalPlan =
    session.read.format(function.format).options(function.batchOptions(options)).load().queryExecution.analyzed
}

object ResolveKinesisFunctions extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsDown {
    case call: KinesisFunctionCall => call.dataSource(SparkSession.active)
  }
}
