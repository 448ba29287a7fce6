package io.github.sparkkinesis.simulator

import java.net.URI
import java.util.concurrent.atomic.LongAdder

import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model._

import scala.jdk.CollectionConverters._

/**
 * Throughput of the simulator through the raw AWS SDK v2 (CBOR, sync Apache 5 client): writers loop PutRecords
 * of 500 records of 100 bytes while a reader loops GetRecords over every shard, quotas off. Prints records/s
 * written and read, and for an in-process server how much CPU its threads used: the SDK client, not the server,
 * is what limits the loop on a 2-core machine. `make bench-simulator` runs it; arguments:
 * [seconds] [writers] [shards] [endpoint]. Without an endpoint it starts an in-process simulator.
 */
object SimulatorBench {
  private val threads = java.lang.management.ManagementFactory.getThreadMXBean

  /** CPU time of the in-process server's Netty threads (zero against an external endpoint). */
  private def serverCpuNanos(): Long = threads.getAllThreadIds.iterator
    .filter(id => Option(threads.getThreadInfo(id)).exists(_.getThreadName.startsWith("nioEventLoopGroup")))
    .map(id => math.max(0L, threads.getThreadCpuTime(id))).sum

  private val RecordBytes = 100
  private val BatchSize = 500

  def main(args: Array[String]): Unit = {
    val seconds = args.lift(0).map(_.toInt).getOrElse(10)
    val writers = args.lift(1).map(_.toInt).getOrElse(2)
    val shards = args.lift(2).map(_.toInt).getOrElse(4)
    val external = args.lift(3).map(URI.create)
    val server = if (external.isEmpty) Some(SimulatorServer.start(new Simulator(Settings(quotas = QuotaSettings.off)))) else None
    val endpoint = external.getOrElse(server.get.endpoint)
    val client = SdkClients.kinesis(endpoint)
    try println(run(client, seconds, writers, shards, warmUpMillis = 3000).report(endpoint))
    finally { client.close(); server.foreach(_.close()) }
  }

  final case class Result(shards: Int, writers: Int, elapsedSeconds: Double, written: Long, read: Long,
      serverCpuSeconds: Double) {
    def report(endpoint: URI): String = {
      val lines = Seq(
        f"simulator bench against $endpoint: $shards shards, $writers writer(s) + 1 reader, " +
          f"$BatchSize x $RecordBytes-byte records per PutRecords, $elapsedSeconds%.1f s measured",
        f"  written: ${written / elapsedSeconds}%,.0f records/s",
        f"  read:    ${read / elapsedSeconds}%,.0f records/s",
        f"  total:   ${(written + read) / elapsedSeconds}%,.0f records/s through the simulator")
      val server = if (serverCpuSeconds > 0) Seq(
        f"  server:  ${serverCpuSeconds / elapsedSeconds * 100}%.0f%% of one core busy; " +
          f"${(written + read) / serverCpuSeconds}%,.0f records (written + read) per second of server CPU")
      else Nil
      (lines ++ server).mkString("\n")
    }
  }

  def run(client: KinesisClient, seconds: Double, writers: Int, shards: Int, warmUpMillis: Long): Result = {
    val stream = s"bench-${System.nanoTime()}"
    client.createStream(CreateStreamRequest.builder().streamName(stream).shardCount(shards).build())
    val shardIds = client.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().asScala.map(_.shardId())
    val payload = SdkBytes.fromByteArray(Array.fill[Byte](RecordBytes)(7))
    val written = new LongAdder
    val read = new LongAdder
    @volatile var running = true

    // Requests are built once and sent again and again: the loop measures the SDK's calls, not its builders.
    val requests = (0 until 16).map { b =>
      PutRecordsRequest.builder().streamName(stream).records((0 until BatchSize).map { i =>
        PutRecordsRequestEntry.builder().partitionKey(s"key-$b-$i").data(payload).build()
      }.asJava).build()
    }
    val writerThreads = (0 until writers).map { w =>
      new Thread(() => {
        var n = w
        while (running) {
          val response = client.putRecords(requests(n % requests.size))
          written.add(BatchSize - response.failedRecordCount().longValue())
          n += 1
        }
      }, s"writer-$w")
    }
    val reader = new Thread(() => {
      val iterators = scala.collection.mutable.Map(shardIds.toSeq.map { id =>
        id -> client.getShardIterator(GetShardIteratorRequest.builder().streamName(stream).shardId(id)
          .shardIteratorType(ShardIteratorType.TRIM_HORIZON).build()).shardIterator()
      }: _*)
      while (running) shardIds.foreach { id =>
        val response = client.getRecords(GetRecordsRequest.builder().shardIterator(iterators(id)).build())
        read.add(response.records().size().toLong)
        iterators(id) = response.nextShardIterator()
      }
    }, "reader")

    val threads = writerThreads :+ reader
    threads.foreach(_.start())
    // Warm-up: the JIT and connection pools settle before the measured window starts.
    Thread.sleep(warmUpMillis)
    val (w0, r0, t0, s0) = (written.sum(), read.sum(), System.nanoTime(), serverCpuNanos())
    Thread.sleep((seconds * 1000).toLong)
    val (w1, r1, t1, s1) = (written.sum(), read.sum(), System.nanoTime(), serverCpuNanos())
    running = false
    threads.foreach(_.join())
    Result(shards, writers, (t1 - t0) / 1e9, w1 - w0, r1 - r0, (s1 - s0) / 1e9)
  }
}
