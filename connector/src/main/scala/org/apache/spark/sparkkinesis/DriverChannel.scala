package org.apache.spark.sparkkinesis

import scala.concurrent.duration._
import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.internal.Logging
import org.apache.spark.rpc.{RpcCallContext, RpcEnv, RpcTimeout, ThreadSafeRpcEndpoint}
import org.apache.spark.util.RpcUtils

/**
 * The one piece of Spark's internal RPC the connector uses: executors tell a query's driver that something
 * changed, so an idle query needs no Spark job to find out. Spark keeps its RPC `private[spark]`, hence this
 * package; everything else of the connector stays outside it. The API has been stable since Spark 2.
 */
object DriverChannel extends Logging {

  private val AskTimeout = new RpcTimeout(10.seconds, "spark-kinesis driver channel")

  /**
   * On the driver: an endpoint `name` whose messages go to `onMessage` (on Spark's RPC dispatcher: keep it
   * short); what it returns answers an [[ask]]. Returns the function that removes it, or None when there is no
   * Spark environment.
   */
  def listen(name: String)(onMessage: Any => Any): Option[() => Unit] = Option(SparkEnv.get).flatMap { env =>
    try {
      val endpoint = new ThreadSafeRpcEndpoint {
        override val rpcEnv: RpcEnv = env.rpcEnv
        override def receive: PartialFunction[Any, Unit] = { case message => onMessage(message) }
        override def receiveAndReply(context: RpcCallContext): PartialFunction[Any, Unit] = {
          case message => context.reply(onMessage(message))
        }
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
  def connect(name: String): Option[Any => Unit] = link(name).map(ref =>
    (message: Any) =>
      try ref.send(message)
      catch { case NonFatal(e) => logDebug(s"Signal to $name lost", e) })

  /**
   * On an executor: the driver endpoint `name`'s answer to `message` (waiting up to 10 s), or None when it cannot
   * be reached or does not answer.
   */
  def ask(name: String, message: Any): Option[Any] = link(name).flatMap { ref =>
    try Option(ref.askSync[Any](message, AskTimeout))
    catch {
      case NonFatal(e) => logInfo(s"The driver endpoint $name did not answer (${e.getMessage})"); None
    }
  }

  private def link(name: String) = Option(SparkEnv.get).flatMap { env =>
    try {
      Some(RpcUtils.makeDriverRef(name, env.conf, env.rpcEnv))
    } catch {
      case NonFatal(e) =>
        logInfo(s"The driver endpoint $name cannot be reached from this executor (${e.getMessage})")
        None
    }
  }
}
