package io.github.sparkkinesis.simulator

import java.net.{InetSocketAddress, URI}

import io.netty.bootstrap.ServerBootstrap
import io.netty.channel.{Channel, ChannelInitializer, ChannelOption}
import io.netty.channel.nio.NioEventLoopGroup
import io.netty.channel.socket.SocketChannel
import io.netty.channel.socket.nio.NioServerSocketChannel
import io.netty.handler.codec.http.{HttpObjectAggregator, HttpServerCodec}
import io.netty.handler.codec.http2.{Http2FrameCodecBuilder, Http2MultiplexHandler, Http2StreamFrameToHttpObjectCodec}

/**
 * The simulator on a loopback port (never another interface): plain HTTP/1.1 with keep-alive, and HTTP/2 with prior
 * knowledge on the same port (SubscribeToShard needs it), Netty's NIO transport. `port` 0 picks a free one; `endpoint` tells which.
 */
final class SimulatorServer private (val simulator: Simulator, channel: Channel, groups: Seq[NioEventLoopGroup])
  extends AutoCloseable {
  val port: Int = channel.localAddress().asInstanceOf[InetSocketAddress].getPort
  val endpoint: URI = URI.create(s"http://127.0.0.1:$port")

  override def close(): Unit = {
    channel.close().syncUninterruptibly()
    groups.foreach(_.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly())
  }
}

object SimulatorServer {
  /** Largest request accepted: a 10 MiB PutRecords grows by a third when base64-encoded in JSON. */
  private val MaxRequestBytes = 16 * 1024 * 1024

  def start(simulator: Simulator, port: Int = 0, threads: Int = 2): SimulatorServer = {
    val api = new KinesisApi(simulator)
    val admin = new AdminApi(simulator)
    val requestIds = new java.util.concurrent.atomic.AtomicLong
    val boss = new NioEventLoopGroup(1)
    val workers = new NioEventLoopGroup(threads)
    try {
      val channel = new ServerBootstrap()
        .group(boss, workers)
        .channel(classOf[NioServerSocketChannel])
        .option(ChannelOption.SO_BACKLOG, Integer.valueOf(1024))
        .childOption(ChannelOption.TCP_NODELAY, java.lang.Boolean.TRUE)
        .childHandler(new ChannelInitializer[SocketChannel] {
          override def initChannel(ch: SocketChannel): Unit = {
            def handlers() = Seq(new HttpObjectAggregator(MaxRequestBytes), new HttpHandler(simulator, api, admin, requestIds))
            ch.pipeline().addLast(new ProtocolSniffer(
              ctx => ctx.pipeline().addLast(new HttpServerCodec()).addLast(handlers(): _*),
              // HTTP/2: each stream is a child channel speaking HTTP/1-style objects to the same handler.
              ctx => ctx.pipeline().addLast(Http2FrameCodecBuilder.forServer().build(),
                new Http2MultiplexHandler(new ChannelInitializer[Channel] {
                  override def initChannel(stream: Channel): Unit =
                    stream.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true)).addLast(handlers(): _*)
                }))))
          }
        })
        .bind(new InetSocketAddress("127.0.0.1", port)).sync().channel()
      new SimulatorServer(simulator, channel, Seq(boss, workers))
    } catch {
      case e: Throwable =>
        boss.shutdownGracefully(); workers.shutdownGracefully()
        throw e
    }
  }
}
