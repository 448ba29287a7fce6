package io.github.sparkkinesis.source
package driver

import scala.util.control.NonFatal

import io.github.sparkkinesis.client.{KinesisClientFactory, StreamNotFound}
import io.github.sparkkinesis.options.KinesisOptions.{DeregisterConsumerTimeoutInterval, RegisterConsumerTimeoutInterval}
import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

/**
 * The enhanced fan-out consumers of one query, one per stream, on the driver: registered (or found, when a
 * consumer of that name exists: a restart finds its own) and waited for until ACTIVE before the first snapshot,
 * so executors subscribe with ARNs that work. Deregistered when the query stops if `requireConsumerDeregistration`
 * (never a consumer given by `registeredConsumerId`: it belongs to whoever registered it).
 */
final class FanOutConsumers(config: SourceConfig, fanOut: FanOutConfig, derivedName: => String) extends Logging {
  import FanOutConsumers._

  private val client: KinesisClient = KinesisClientFactory.sync(config.connection)
  /** RegisterStreamConsumer's refusals come back at once, to be told apart ([[register]]). */
  private lazy val registrar: KinesisClient = KinesisClientFactory.syncFailingOnLimits(config.connection)
  @volatile private var registered = Map.empty[String, String]

  /** The name this query registers under, when it registers one. */
  lazy val consumerName: String = fanOut.consumerName.getOrElse(fanOut.consumerNamePrefix + derivedName)

  /** Stream name to consumer ARN, every consumer ACTIVE. */
  def resolve(): Map[String, String] = {
    val supplied = fanOut.registeredConsumers.map(id => streamOfGiven(id) -> id).toMap
    val arns = config.streams.map { stream =>
      stream -> supplied.getOrElse(
        stream,
        fanOut.registeredConsumerName match {
          case Some(name) => existing(stream, name)
          case None =>
            val arn = register(stream)
            registered += stream -> arn
            arn
        })
    }.toMap
    arns.foreach { case (stream, arn) => awaitActive(stream, arn) }
    arns
  }

  /** Consumers this query registered, deregistered if the options ask for it; best effort (the query is stopping). */
  def stop(): Unit = if (fanOut.deregisterOnStop) registered.foreach { case (stream, arn) =>
    try {
      client.deregisterStreamConsumer(DeregisterStreamConsumerRequest.builder().consumerARN(arn).build())
      logInfo(s"Deregistered enhanced fan-out consumer $arn of stream $stream")
      awaitGone(stream, arn)
    } catch {
      case _: ResourceNotFoundException => ()
      case NonFatal(e) => logWarning(s"Deregistering enhanced fan-out consumer $arn failed: $e")
    }
  }

  /**
   * A consumer is DELETING for a while after its deregistration; a query restarted at once under the same name waits
   * for it to go. Waiting here (as Databricks' `deregisterConsumerTimeoutInterval` does) lets the stop say whether
   * it went; past the interval the stop goes on, since failing a stopping query would help nobody.
   */
  private def awaitGone(stream: String, arn: String): Unit = {
    val deadline = System.nanoTime() + fanOut.deregisterTimeout.toNanos
    var gone = false
    while (!gone) {
      gone =
        try {
          client.describeStreamConsumer((b: DescribeStreamConsumerRequest.Builder) => b.consumerARN(arn))
          false
        } catch { case _: ResourceNotFoundException => true }
      if (!gone) {
        if (System.nanoTime() > deadline) {
          logWarning(s"Enhanced fan-out consumer $arn of stream $stream was still being deleted after " +
            s"${fanOut.deregisterTimeout.toMillis} ms (${DeregisterConsumerTimeoutInterval.key}); stopping without waiting longer")
          return
        }
        Thread.sleep(PollInterval.toMillis)
      }
    }
  }

  private def streamOfGiven(id: String): String = {
    val stream = ConsumerNames.streamOf(id)
    if (!config.streams.contains(stream)) throw new IllegalArgumentException(s"Option 'registeredConsumerId' names " +
      s"a consumer of stream '$stream', which the query does not read (${config.streams.mkString(", ")}): give one " +
      "consumer ARN per stream read")
    stream
  }

  private def streamArnOf(stream: String): String =
    try config.streamArn(stream).getOrElse(client.describeStreamSummary((b: DescribeStreamSummaryRequest.Builder) =>
        b.streamName(stream)).streamDescriptionSummary().streamARN())
    catch { case e: ResourceNotFoundException => throw ShardDiscovery.streamNotFound(stream, config.connection, e) }

  /** `registeredConsumerIdType=name`: the consumer must be there already; it is someone else's to register. */
  private def existing(stream: String, name: String): String =
    consumers(streamArnOf(stream)).find(c => c.consumerName() == name && c.consumerStatus() != ConsumerStatus.DELETING)
      .map(_.consumerARN()).getOrElse(throw new IllegalArgumentException(s"Option 'registeredConsumerId' names " +
        s"enhanced fan-out consumer '$name', which is not registered on stream $stream: register it, or give " +
        s"consumerName=$name instead to have the query register it"))

  /**
   * Registers first and asks questions after: Kinesis does not say how many consumers a stream allows (20, or 50
   * on On-demand Advantage streams), only refuses one too many with LimitExceededException, which is also its
   * answer to calls that come too fast. So a refusal is answered by listing the consumers ([[ConsumerLimit]]): a
   * rate is waited out (within `registerConsumerTimeoutInterval`), the limit fails the query naming them.
   */
  private def register(stream: String): String = {
    val streamArn = streamArnOf(stream)
    val deadline = System.nanoTime() + fanOut.registerTimeout.toNanos
    var arn: Option[String] = None
    /** Since when Kinesis' refusals have looked like the stream's limit ([[ConsumerLimit.Persistence]]). */
    var limitSince: Option[Long] = None
    var first = true
    while (arn.isEmpty) {
      val existing = consumers(streamArn)
      if (first) warnOfDatabricksConsumer(stream, existing)
      first = false
      existing.find(_.consumerName() == consumerName) match {
        case Some(c) if c.consumerStatus() != ConsumerStatus.DELETING =>
          logInfo(s"Reusing enhanced fan-out consumer ${c.consumerARN()} on stream $stream")
          arn = Some(c.consumerARN())
        case Some(_) => waitABit(deadline, s"consumer '$consumerName' of stream $stream to finish deleting")
        case None =>
          try {
            val consumer = registrar.registerStreamConsumer((b: RegisterStreamConsumerRequest.Builder) =>
              b.streamARN(streamArn).consumerName(consumerName)).consumer()
            logInfo(s"Registered enhanced fan-out consumer ${consumer.consumerARN()} on stream $stream")
            arn = Some(consumer.consumerARN())
          } catch {
            case _: ResourceInUseException => () // registered meanwhile (another run of this query): found next round
            case e: LimitExceededException =>
              val listed = consumers(streamArn)
              val now = System.nanoTime()
              limitSince = if (ConsumerLimit.looksReached(listed, consumerName)) limitSince.orElse(Some(now)) else None
              // Past the deadline too: the limit says more than running out of time would.
              if (limitSince.exists(since =>
                  now - since >= ConsumerLimit.Persistence.toNanos ||
                    now + PollInterval.toNanos > deadline)) throw tooManyConsumers(stream, listed, e)
              waitABit(
                deadline,
                s"consumer '$consumerName' to be accepted on stream $stream (Kinesis refused it " +
                  s"with LimitExceededException: ${e.awsErrorDetails().errorMessage()})"
              )
          }
      }
    }
    arn.get
  }

  private def tooManyConsumers(stream: String, listed: Seq[Consumer], e: LimitExceededException): Exception =
    new IllegalStateException(
      s"Stream $stream has ${listed.size} enhanced fan-out consumers, as many as Kinesis " +
        s"allows (Kinesis: ${e.awsErrorDetails().errorMessage()}): deregister one " +
        s"(${listed.map(_.consumerName()).sorted.mkString(", ")}), give one with registeredConsumerId, or read with " +
        "consumerMode=polling",
      e
    )

  /**
   * Databricks' connector names every consumer it registers `databricks_` + its name: a job moved from there with
   * its `consumerName` registers a consumer of its own beside the one it used (a consumer name is used as given:
   * reusing the other one silently would take its subscriptions from the Databricks job if that still runs).
   */
  private def warnOfDatabricksConsumer(stream: String, existing: Seq[Consumer]): Unit =
    if (fanOut.consumerName.isDefined && !existing.exists(_.consumerName() == consumerName))
      existing.find(_.consumerName() == DatabricksPrefix + consumerName).foreach { c =>
        logWarning(s"Stream $stream has enhanced fan-out consumer '${c.consumerName()}', the one Databricks' " +
          s"connector registers for consumerName=$consumerName; this query registers '$consumerName', a consumer " +
          s"of its own. To read through '${c.consumerName()}' instead (once the Databricks job is stopped), set " +
          s"consumerName=${c.consumerName()}")
      }

  private def consumers(streamArn: String): Seq[Consumer] = {
    import scala.jdk.CollectionConverters._
    client.listStreamConsumersPaginator((b: ListStreamConsumersRequest.Builder) => b.streamARN(streamArn))
      .asScala.flatMap(_.consumers().asScala).toSeq
  }

  private def awaitActive(stream: String, arn: String): Unit = {
    val deadline = System.nanoTime() + fanOut.registerTimeout.toNanos
    var active = false
    while (!active) {
      val status =
        try client.describeStreamConsumer((b: DescribeStreamConsumerRequest.Builder) => b.consumerARN(arn))
            .consumerDescription().consumerStatus()
        catch {
          case e: ResourceNotFoundException => throw new IllegalArgumentException(
              s"Enhanced fan-out consumer $arn " +
                s"of stream $stream does not exist (${e.awsErrorDetails().errorMessage()})",
              e)
        }
      active = status == ConsumerStatus.ACTIVE
      if (!active) waitABit(deadline, s"consumer $arn of stream $stream to become ACTIVE (now $status)")
    }
  }

  /** DescribeStreamConsumer allows 20 calls per second per stream: a poll every PollInterval is far below. */
  private def waitABit(deadline: Long, what: String): Unit = {
    if (System.nanoTime() > deadline) throw new IllegalStateException(
      s"Waited ${fanOut.registerTimeout.toMillis} ms (${RegisterConsumerTimeoutInterval.key}) for enhanced fan-out " +
        s"$what; giving up: raise ${RegisterConsumerTimeoutInterval.key}, or check the consumer in the Kinesis console")
    Thread.sleep(PollInterval.toMillis)
  }
}

object FanOutConsumers {
  /** What Databricks' connector puts before the name of every consumer it registers. */
  val DatabricksPrefix = "databricks_"
  private val PollInterval = java.time.Duration.ofMillis(500)
}
