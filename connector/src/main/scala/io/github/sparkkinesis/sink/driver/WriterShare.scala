package io.github.sparkkinesis.sink
package driver

import org.apache.spark.sql.SparkSession

/**
 * The share of each shard's write quota an executor's paces start at, when several executors write at once: one
 * over the executors that run the write's tasks (as many as there are, or tasks if fewer). Every executor paces the
 * shards apart (a JVM's tasks share one pace per shard, [[executor.ShardPaces]]): unpaced until the shards refused
 * records, two executors had 6.6-8.8 % of their attempts throttled on `local-cluster`, and each starting at the
 * whole quota they overshoot together (docs/design/sink-flow-control.md, "Several executors"). None when one JVM
 * writes: local mode, one executor, or one task; its paces find the quota from the shards' refusals alone.
 */
object WriterShare {
  /**
   * Internal, for the bench's before/after rows: `unpaced` starts every executor unpaced, as before shares.
   * Not an option: nothing else should want it.
   */
  val StartConf = "spark.sparkkinesis.internal.writerStart"

  def of(numPartitions: Int): Option[Double] =
    SparkSession.getActiveSession
      .filterNot(_.conf.getOption(StartConf).contains("unpaced"))
      .flatMap(s => forExecutors(executors(s), numPartitions))

  def forExecutors(executors: Int, numPartitions: Int): Option[Double] = {
    val writing = math.min(executors, numPartitions)
    if (writing <= 1) None else Some(1.0 / writing)
  }

  /** Executors the session has now (its block managers but the driver's); 1 in local mode. */
  private def executors(session: SparkSession): Int = {
    val sc = session.sparkContext
    if (sc.isLocal) 1 else math.max(1, sc.getExecutorMemoryStatus.size - 1)
  }
}
