package io.github.sparkkinesis.simulator

import scala.collection.mutable

import Out._

/**
 * An enhanced fan-out consumer of a stream. It is CREATING for `consumerActivationMillis` after registration, then
 * ACTIVE; once deregistered it is DELETING for as long, then gone. Its ARN carries its creation second, as AWS's.
 */
final class ConsumerState(val name: String, val arn: String, val createdMillis: Long) {
  var deregisteredMillis: Option[Long] = None
  /** Once ACTIVE, it stays so even if the clock offset moves back before its creation time, as on AWS. */
  private var activated = false
  /** When each shard was last subscribed to successfully, for the one-per-second rule. */
  val lastSubscribeMillis: mutable.HashMap[String, Long] = mutable.HashMap.empty

  def status(now: Long, activationMillis: Long): String = deregisteredMillis match {
    case Some(_) => "DELETING"
    case None =>
      if (!activated && now >= createdMillis + activationMillis) activated = true
      if (activated) "ACTIVE" else "CREATING"
  }

  def gone(now: Long, activationMillis: Long): Boolean = deregisteredMillis.exists(now >= _ + activationMillis)
}

/**
 * RegisterStreamConsumer, DescribeStreamConsumer, ListStreamConsumers and DeregisterStreamConsumer as AWS answers
 * them, with its limit of consumers per stream (20, or 50 on On-demand Advantage streams:
 * `quotas.consumersPerStream`) and its call rates (when quotas are on): RegisterStreamConsumer 5 per
 * second per account, DeregisterStreamConsumer and ListStreamConsumers 5 and DescribeStreamConsumer 20 per second
 * per stream (`LimitExceededException`).
 */
final class Consumers(sim: Simulator) {
  /** Per stream (Register: per account), AWS's rates for the consumer operations, when quotas are on. */
  private val buckets = scala.collection.mutable.HashMap.empty[(String, String), (QuotaSettings, TokenBucket)]

  private def rate(op: String, scope: String, perSecond: Double): Unit = {
    val quotas = sim.settings.quotas
    if (quotas.enabled) {
      val now = sim.now()
      val bucket = buckets.get((op, scope)).filter(_._1 eq quotas).map(_._2).getOrElse {
        val b = new TokenBucket(perSecond * quotas.factor, now)
        buckets((op, scope)) = (quotas, b)
        b
      }
      if (!bucket.take(1, now)) throw KinesisError.limit(s"Rate exceeded for $op")
    }
  }

  def register(req: Req): Out = {
    rate("RegisterStreamConsumer", "account", 5)
    val stream = sim.stream(req)
    val name = validName(req.str("ConsumerName"))
    val now = sim.now()
    purge(stream, now)
    if (stream.consumers.contains(name)) throw KinesisError.inUse(
      s"Consumer ${Consumers.arnOf(stream, name, 0L).dropRight(2)} already exists")
    val allowed = sim.settings.quotas.consumersPerStream
    if (sim.settings.quotas.enabled && stream.consumers.size >= allowed) throw KinesisError.limit(
      s"Limit of $allowed consumers per stream exceeded for stream ${stream.arn}")
    val consumer = new ConsumerState(name, Consumers.arnOf(stream, name, now / 1000), now)
    stream.consumers(name) = consumer
    obj("Consumer" -> view(stream, consumer, now, withStream = false))
  }

  def describe(req: Req): Out = {
    val (stream, consumer) = find(req)
    rate("DescribeStreamConsumer", stream.name, 20)
    obj("ConsumerDescription" -> view(stream, consumer, sim.now(), withStream = true))
  }

  def list(req: Req): Out = {
    val stream = sim.stream(req)
    rate("ListStreamConsumers", stream.name, 5)
    val now = sim.now()
    purge(stream, now)
    val all = stream.consumers.values.toVector
    val from = req.optStr("NextToken").map(t => try t.toInt catch {
      case _: NumberFormatException => throw KinesisError.invalid(s"NextToken $t is not valid")
    }).getOrElse(0)
    val max = req.optInt("MaxResults").getOrElse(100)
    if (max < 1 || max > 10000) throw KinesisError.invalid(s"MaxResults $max must be between 1 and 10000")
    val page = all.slice(from, from + max)
    obj("Consumers" -> Arr(page.map(view(stream, _, now, withStream = false))),
      "NextToken" -> (if (from + max < all.size) Some(Str((from + max).toString)) else None))
  }

  def deregister(req: Req): Out = {
    val (stream, consumer) = find(req)
    rate("DeregisterStreamConsumer", stream.name, 5)
    val now = sim.now()
    if (consumer.deregisteredMillis.isEmpty) consumer.deregisteredMillis = Some(now)
    purge(stream, now)
    Out.empty
  }

  /** The consumer a request names by ConsumerARN, or by StreamARN and ConsumerName. */
  def find(req: Req): (StreamState, ConsumerState) = {
    val now = sim.now()
    req.optStr("ConsumerARN") match {
      case Some(arn) =>
        val stream = sim.streamNamed(Consumers.streamOf(arn))
        purge(stream, now)
        val consumer = stream.consumers.values.find(_.arn == arn).getOrElse(throw KinesisError.notFound(
          s"Consumer $arn not found."))
        (stream, consumer)
      case None =>
        val stream = sim.stream(req)
        purge(stream, now)
        val name = req.str("ConsumerName")
        (stream, stream.consumers.getOrElse(name, throw KinesisError.notFound(
          s"Consumer $name under stream ${stream.arn} not found.")))
    }
  }

  private def purge(stream: StreamState, now: Long): Unit = {
    val gone = stream.consumers.collect { case (n, c) if c.gone(now, sim.settings.consumerActivationMillis) => n }
    stream.consumers --= gone
  }

  private def view(stream: StreamState, c: ConsumerState, now: Long, withStream: Boolean): Out = obj(
    "ConsumerName" -> Str(c.name),
    "ConsumerARN" -> Str(c.arn),
    "ConsumerStatus" -> Str(c.status(now, sim.settings.consumerActivationMillis)),
    "ConsumerCreationTimestamp" -> Timestamp(c.createdMillis),
    "StreamARN" -> (if (withStream) Some(Str(stream.arn)) else None))

  private def validName(name: String): String = {
    if (!name.matches("[a-zA-Z0-9_.-]{1,128}")) throw KinesisError.validation(
      s"1 validation error detected: Value '$name' at 'consumerName' failed to satisfy constraint: Member must " +
        "satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    name
  }
}

object Consumers {
  private val Arn = """arn:aws[a-z-]*:kinesis:[^:]*:\d{12}:stream/([a-zA-Z0-9_.-]+)/consumer/[a-zA-Z0-9_.-]+:\d+""".r

  def arnOf(stream: StreamState, name: String, createdSeconds: Long): String = s"${stream.arn}/consumer/$name:$createdSeconds"

  def streamOf(consumerArn: String): String = consumerArn match {
    case Arn(stream) => stream
    case _ => throw KinesisError.invalid(s"$consumerArn is not a consumer ARN")
  }
}
