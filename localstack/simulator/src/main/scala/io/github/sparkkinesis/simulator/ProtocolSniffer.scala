package io.github.sparkkinesis.simulator

import java.nio.charset.StandardCharsets.US_ASCII

import io.netty.buffer.ByteBuf
import io.netty.channel.ChannelHandlerContext
import io.netty.handler.codec.ByteToMessageDecoder

/**
 * Tells HTTP/2 with prior knowledge (what the AWS SDK's async client speaks to an `http://` endpoint with HTTP/2
 * on, and the only way SubscribeToShard is served) from HTTP/1.1 on one port: a connection that opens with the
 * HTTP/2 client preface gets the HTTP/2 pipeline, any other the HTTP/1.1 one. Decided on the first bytes, then
 * removed; the bytes read so far go on to the chosen pipeline.
 */
final class ProtocolSniffer(http1: ChannelHandlerContext => Unit, http2: ChannelHandlerContext => Unit)
  extends ByteToMessageDecoder {
  import ProtocolSniffer.Preface

  override def decode(ctx: ChannelHandlerContext, in: ByteBuf, out: java.util.List[AnyRef]): Unit = {
    val n = math.min(in.readableBytes(), Preface.length)
    var matches = true
    var i = 0
    while (matches && i < n) { matches = in.getByte(in.readerIndex() + i) == Preface(i); i += 1 }
    if (!matches) choose(ctx, http1)
    else if (n == Preface.length) choose(ctx, http2)
  }

  private def choose(ctx: ChannelHandlerContext, pipeline: ChannelHandlerContext => Unit): Unit = {
    pipeline(ctx)
    ctx.pipeline().remove(this)
  }
}

object ProtocolSniffer {
  private val Preface: Array[Byte] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(US_ASCII)
}
