package io.github.sparkkinesis.simulator

import java.util.UUID
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong

import io.netty.buffer.Unpooled
import io.netty.channel.{ChannelFutureListener, ChannelHandlerContext, ChannelOption, SimpleChannelInboundHandler}
import io.netty.handler.codec.http._

/**
 * One HTTP request: `/_sim/...` goes to the admin API, a POST with `X-Amz-Target` to the Kinesis API, after the
 * fault rules had their say. Work runs on the connection's event loop; a delayed or hung answer is scheduled on it,
 * never slept on, so one slow connection does not hold up the others.
 */
final class HttpHandler(sim: Simulator, api: KinesisApi, admin: AdminApi, requestIds: AtomicLong) extends SimpleChannelInboundHandler[FullHttpRequest] {
  private val TargetPrefix = "Kinesis_20131202."
  private val requestIdPrefix = UUID.randomUUID().toString

  override def channelRead0(ctx: ChannelHandlerContext, request: FullHttpRequest): Unit = {
    val body = new Array[Byte](request.content().readableBytes())
    request.content().readBytes(body)
    val keepAlive = HttpUtil.isKeepAlive(request)
    val path = new QueryStringDecoder(request.uri()).path()
    if (path.startsWith(AdminApi.Prefix)) {
      val (status, json) = admin.handle(request.method().name(), path, body)
      respond(ctx, keepAlive, status, "application/json", json, None)
    } else if (request.method() == HttpMethod.POST && request.headers().contains("X-Amz-Target")) {
      kinesis(ctx, keepAlive, request, body)
    } else {
      // Health checks (kinesis-mock answers GET /healthcheck too) and anything else a client may probe with.
      respond(ctx, keepAlive, 200, "application/json", """{"status":"ok"}""".getBytes, None)
    }
  }

  private def kinesis(ctx: ChannelHandlerContext, keepAlive: Boolean, request: FullHttpRequest, body: Array[Byte]): Unit = {
    val target = request.headers().get("X-Amz-Target")
    val format = WireFormat.forContentType(request.headers().get(HttpHeaderNames.CONTENT_TYPE))
    api.countRequest(format)
    val op = if (target.startsWith(TargetPrefix)) target.substring(TargetPrefix.length) else target
    val req = try Right(format.read(body)) catch {
      case e: KinesisError => Left(e)
      case e: java.io.IOException => Left(KinesisError("SerializationException", s"Malformed request body: ${e.getMessage}"))
    }
    val stream = req.toOption.flatMap(api.streamOf(op, _))
    // AWS authenticates a request before anything else happens to it, faults included.
    val refused = sim.auth.flatMap(_.check(op, request, body, stream.map(sim.arn(_))))
    val decision = if (refused.isDefined) FaultDecision(0, None) else sim.faults.decide(op, stream)
    if (decision.latencyMillis > 0 || decision.action.isDefined) api.countFault(op, stream)

    def serve(): Unit = decision.action.map(_.kind) match {
      case Some(FaultKind.Reset) =>
        // SO_LINGER 0 makes close send RST, which clients see as "connection reset", not as a clean end of stream.
        ctx.channel().config().setOption(ChannelOption.SO_LINGER, Integer.valueOf(0))
        ctx.close()
      case Some(FaultKind.Hang) =>
        ctx.executor().schedule((() => { ctx.close(); () }): Runnable, decision.action.get.hangMillis, TimeUnit.MILLISECONDS)
      case Some(FaultKind.Http500) => answerError(KinesisError.internalFailure)
      case Some(FaultKind.Http503) => answerError(KinesisError.serviceUnavailable)
      case Some(FaultKind.ExpireIterator) =>
        answerError(KinesisError.expiredIterator("Iterator expired (expiry forced by the simulator's fault injection)."))
      case Some(FaultKind.DeleteStream) =>
        decision.action.flatMap(_.stream).foreach(name =>
          try sim.deleteStream(name) catch { case _: KinesisError => () })
        answer()
      case _ => answer()
    }

    def answerError(e: KinesisError): Unit =
      respond(ctx, keepAlive, e.status, format.contentType, format.error(e), Some(e.errorType))

    def answer(): Unit = refused.map(Left(_)).getOrElse(req) match {
      case Left(e) => answerError(e)
      case Right(r) if op == "SubscribeToShard" =>
        try {
          val start = api.subscribe(r)
          val streamFault = decision.action.filter(a => a.kind == FaultKind.CutSubscription || a.kind == FaultKind.SubscriptionError)
          new SubscriptionPusher(sim, ctx, start, format, nextRequestId(), streamFault).run()
        } catch {
          case e: KinesisError => answerError(e)
          case e: IllegalArgumentException => answerError(KinesisError.invalid(e.getMessage))
        }
      case Right(r) =>
        try {
          val out = api.call(op, r)
          respond(ctx, keepAlive, 200, format.contentType, format.write(out), None)
        } catch {
          case e: KinesisError => answerError(e)
          case e: IllegalArgumentException => answerError(KinesisError.invalid(e.getMessage))
        }
    }

    if (decision.latencyMillis > 0)
      ctx.executor().schedule((() => serve()): Runnable, decision.latencyMillis, TimeUnit.MILLISECONDS)
    else serve()
  }

  private def respond(ctx: ChannelHandlerContext, keepAlive: Boolean, status: Int, contentType: String,
      body: Array[Byte], errorType: Option[String]): Unit = {
    val response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
      Unpooled.wrappedBuffer(body))
    val headers = response.headers()
    headers.set(HttpHeaderNames.CONTENT_TYPE, contentType)
    headers.setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
    headers.set("x-amzn-RequestId", nextRequestId())
    // As AWS does, in whole seconds, on the simulator's clock (`clockOffsetMs` included): what a client may learn
    // Kinesis' clock from.
    headers.set(HttpHeaderNames.DATE, HttpHandler.httpDate(sim.now()))
    errorType.foreach(t => headers.set("x-amzn-ErrorType", t))
    if (keepAlive) {
      headers.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE)
      ctx.writeAndFlush(response)
    } else ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE)
  }

  private def nextRequestId(): String = s"$requestIdPrefix-${requestIds.incrementAndGet()}"

  override def exceptionCaught(ctx: ChannelHandlerContext, cause: Throwable): Unit = ctx.close()
}

object HttpHandler {
  def httpDate(millis: Long): String = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
    java.time.ZonedDateTime.ofInstant(java.time.Instant.ofEpochMilli(millis), java.time.ZoneOffset.UTC))
}
