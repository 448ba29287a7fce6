package io.github.sparkkinesis.simulator

import java.util.concurrent.TimeUnit

import io.netty.buffer.Unpooled
import io.netty.channel.{ChannelHandlerContext, ChannelOption}
import io.netty.handler.codec.http._
import io.netty.handler.codec.http2.Http2StreamChannel

import Out._

/** A SubscribeToShard request the simulator accepted: what its stream of events reads, and from where. */
final case class SubscriptionStart(stream: String, incarnation: Long, shardId: String, consumerArn: String, counter: Long)

/**
 * SubscribeToShard's checks, as AWS makes them: the consumer exists and is ACTIVE, the shard exists, the starting
 * position is valid; with quotas on, one successful call per second per consumer and shard
 * (LimitExceededException), and another within 5 seconds of a successful one answers ResourceInUseException
 * (shortened to the subscription duration when a test shortens that).
 */
final class Subscriptions(sim: Simulator, consumers: Consumers, data: DataPlane) {
  def start(req: Req): SubscriptionStart = {
    val (stream, consumer) = consumers.find(req)
    val now = sim.now()
    val status = consumer.status(now, sim.settings.consumerActivationMillis)
    if (status != "ACTIVE") throw KinesisError.inUse(s"Consumer ${consumer.arn} is $status, not ACTIVE")
    val shard = sim.shard(stream, req.str("ShardId"))
    val from = req.obj("StartingPosition").getOrElse(throw KinesisError.validation(
      "1 validation error detected: Value null at 'startingPosition' failed to satisfy constraint: Member must not be null"))
    val counters = sim.counters.shard(stream.name, shard.id)
    val quotas = sim.settings.quotas
    // A last subscription in the clock's future was made before the clock offset moved back: how long ago it was
    // is unknown, so it does not count (rather than refusing subscriptions until the clock catches up).
    consumer.lastSubscribeMillis.get(shard.id).filter(last => quotas.enabled && last <= now).foreach { last =>
      val since = now - last
      if (since < (1000 / quotas.factor).toLong) {
        counters.throttledSubscriptions += 1
        throw KinesisError.limit(s"Rate exceeded for consumer ${consumer.arn} and shard ${shard.id}")
      }
      if (since < math.min(Subscriptions.InUseMillis, sim.settings.subscriptionDurationMillis))
        throw KinesisError.inUse(s"Another active subscription exists for consumer ${consumer.arn} and shard ${shard.id}")
    }
    sim.trim(stream, now)
    val counter = data.startCounter(stream, shard, from.str("Type"), from.optStr("SequenceNumber"),
      from.optTimestampMillis("Timestamp"), "SequenceNumber")
    consumer.lastSubscribeMillis(shard.id) = now
    counters.subscriptions += 1
    SubscriptionStart(stream.key, stream.incarnation, shard.id, consumer.arn, counter)
  }
}

object Subscriptions {
  val InUseMillis = 5000L
  /** How often a subscription looks for new records: AWS pushes them as they arrive, within tens of ms. */
  val TickMillis = 10L
  /** What one event holds at most. */
  val MaxEventRecords = 10000
  val MaxEventBytes: Long = 1024L * 1024
}

/**
 * One subscription's stream of events on its connection (an HTTP/2 stream, or a chunked HTTP/1.1 response, which
 * boto3 reads): `initial-response`, then a `SubscribeToShardEvent` whenever records arrive (and an empty one every
 * `subscriptionHeartbeatMillis` on a quiet shard), pushed at most 2 MiB/s with quotas on, until the subscription's
 * duration passes or its shard's end is sent. Events go out only while the channel is writable: a client that
 * stops reading stops the push (HTTP/2 flow control), and nothing piles up here. Runs on the channel's event loop.
 */
final class SubscriptionPusher(sim: Simulator, ctx: ChannelHandlerContext, start: SubscriptionStart, format: WireFormat,
    requestId: String, fault: Option[FaultRule]) {
  private val began = sim.now()
  private var position = start.counter
  private var lastEventMillis = began - sim.settings.subscriptionHeartbeatMillis // the first event goes out at once
  private var events = 0
  private var done = false
  private val pushBucket =
    if (sim.settings.quotas.enabled) Some(new TokenBucket(QuotaSettings.ReadBytesPerSecond * sim.settings.quotas.factor, began))
    else None

  def run(): Unit = {
    val response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK)
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, EventStream.ContentType).set("x-amzn-RequestId", requestId)
    HttpUtil.setTransferEncodingChunked(response, true)
    ctx.write(response)
    send(EventStream.event("initial-response", format.contentType, format.write(Out.empty)))
    tick()
  }

  private def send(message: Array[Byte]): Unit = ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(message)))

  private def schedule(): Unit =
    ctx.executor().schedule((() => tick()): Runnable, Subscriptions.TickMillis, TimeUnit.MILLISECONDS)

  private def tick(): Unit = if (!done) {
    val now = sim.now()
    if (!ctx.channel().isActive) done = true
    else if (now >= began + sim.settings.subscriptionDurationMillis) { count(_.expiredSubscriptions += 1); end() }
    else if (!ctx.channel().isWritable || pushBucket.exists(!_.hasTokens(now))) schedule()
    else next(now) match {
      case Left(error) =>
        send(EventStream.exception(error, format.contentType, format.error(error)))
        end()
      case Right(None) => schedule()
      case Right(Some((event, last))) =>
        send(EventStream.event("SubscribeToShardEvent", format.contentType, format.write(event)))
        events += 1
        lastEventMillis = now
        fault.filter(_ => events >= fault.get.afterEvents) match {
          case Some(rule) if rule.kind == FaultKind.CutSubscription => count(_.cutSubscriptions += 1); cut()
          case Some(rule) =>
            val error = KinesisError(rule.exceptionType, s"Subscription ended by the simulator's fault injection")
            count(_.cutSubscriptions += 1)
            send(EventStream.exception(error, format.contentType, format.error(error)))
            end()
          case None => if (last) end() else schedule()
        }
    }
  }

  /** Under the lock: the next event, if one is due (records, a heartbeat, the shard's end); true when it is the last. */
  private def next(now: Long): Either[KinesisError, Option[(Out, Boolean)]] = sim.lock.synchronized {
    sim.streams.get(start.stream).filter(_.incarnation == start.incarnation).flatMap(_.shard(start.shardId)) match {
      case None => Left(KinesisError.notFound(s"Shard ${start.shardId} of stream ${start.stream} no longer exists"))
      case Some(shard) =>
        val stream = sim.streams(start.stream)
        sim.trim(stream, now)
        val log = shard.log
        val from = log.indexAtCounter(position)
        var end = from
        var bytes = 0L
        while (end < log.size && end - from < Subscriptions.MaxEventRecords &&
          (end == from || bytes + log(end).size <= Subscriptions.MaxEventBytes)) {
          bytes += log(end).size
          end += 1
        }
        val records = (from until end).map(log(_))
        // With splitEndAnswer the last records go without the end, which the next (empty) event carries.
        val atEndOfClosed = !shard.isOpen && end == log.size && (records.isEmpty || !sim.settings.splitEndAnswer)
        // A clock that went back (the clock offset moved) counts as a heartbeat due, not as a longer silence.
        val heartbeat = now - lastEventMillis >= sim.settings.subscriptionHeartbeatMillis || now < lastEventMillis
        if (records.isEmpty && !atEndOfClosed && !heartbeat) Right(None)
        else {
          position = if (records.nonEmpty) records.last.counter + 1
            else if (end == log.size) math.max(position, shard.endCounter.getOrElse(sim.lastCounter + 1))
            else position
          pushBucket.foreach(_.takeIntoDebt(bytes.toDouble, now))
          val c = sim.counters.shard(stream.name, shard.id)
          c.subscriptionEvents += 1
          c.subscriptionRecords += records.size
          c.subscriptionBytes += bytes
          val behind = if (end < log.size) math.max(0L, now - log(end).arrivalMillis) else 0L
          // AFTER the continuation is where the next event starts; a quiet shard's moves with the server's counter.
          val continuation = math.max(position - 1, shard.startCounter)
          Right(Some(obj(
            "Records" -> Records(records),
            "ContinuationSequenceNumber" -> (if (atEndOfClosed) None else Some(Str(SequenceNumbers.format(continuation)))),
            "MillisBehindLatest" -> Num(behind),
            "ChildShards" -> (if (atEndOfClosed) Some(Arr(shard.childIds.flatMap(stream.shard).map(ShardViews.child))) else None)
          ) -> atEndOfClosed))
        }
    }
  }

  private def count(f: ShardCounters => Unit): Unit =
    sim.lock.synchronized(f(sim.counters.shard(start.stream, start.shardId)))

  private def end(): Unit = if (!done) {
    done = true
    ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT)
  }

  /**
   * An abrupt end: the connection is reset (over HTTP/2 every subscription on it ends). Not a RST_STREAM: the SDK's
   * async client takes a reset stream for a clean end of the subscription (measured), which is not what a cut is.
   */
  private def cut(): Unit = if (!done) {
    done = true
    ctx.channel() match {
      case stream: Http2StreamChannel =>
        stream.parent().config().setOption(ChannelOption.SO_LINGER, Integer.valueOf(0))
        stream.parent().close()
      case channel =>
        channel.config().setOption(ChannelOption.SO_LINGER, Integer.valueOf(0))
        ctx.close()
    }
  }

}
