package org.apache.spark.sparkkinesis

import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.internal.Logging
import org.apache.spark.rpc.{RpcEnv, ThreadSafeRpcEndpoint}
import org.apache.spark.util.RpcUtils

/**
 * The one piece of Spark's internal RPC the connector uses: executors tell a query's driver that something
 * changed, so an idle query needs no Spark job to find out. Spark keeps its RPC `private[spark]`, hence this
 * package; everything else of the connector stays outside it. The API has been stable since Spark 2.
 */
object DriverChannel extends Logging {

  /**
   * On the driver: an endpoint `name` whose messages go to `onMessage` (on Spark's RPC dispatcher: keep it
   * short). Returns the function that removes it, or None when there is no Spark environment.
   */
  def listen(name: String)(onMessage: Any => Unit): Option[() => Unit] = Option(SparkEnv.get).flatMap { env =>
    try {
      val endpoint = new ThreadSafeRpcEndpoint {
        override val rpcEnv: RpcEnv = env.rpcEnv
        override def receive: PartialFunction[Any, Unit] = { case message => onMessage(message) }
      }
      val ref = env.rpcEnv.setupEndpoint(name, endpoint)
      Some(() => env.rpcEnv.stop(ref))
    } catch {
      case NonFatal(e) => logWarning(s"Could not open the driver endpoint $name; executors will not signal it", e); None
    }
  }

  /**
   * On an executor: a function that sends a message to the driver's endpoint `name` without waiting, or None
   * when it cannot be reached. Finding the endpoint asks the driver, so call this from a task, not a hot path.
   */
  def connect(name: String): Option[Any => Unit] = Option(SparkEnv.get).flatMap { env =>
    try {
      val ref = RpcUtils.makeDriverRef(name, env.conf, env.rpcEnv)
      Some((message: Any) => try ref.send(message) catch { case NonFatal(e) => logDebug(s"Signal to $name lost", e) })
    } catch {
      case NonFatal(e) => logInfo(s"The driver endpoint $name cannot be reached (${e.getMessage}); this executor " +
        "will not signal it"); None
    }
  }
}
