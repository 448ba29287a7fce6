package io.github.sparkkinesis.source
package driver

import java.util.concurrent.{Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

import io.github.sparkkinesis.client.KinesisClientFactory
import io.github.sparkkinesis.source.ShardPosition._
import io.github.sparkkinesis.source.executor.ShardReader
import software.amazon.awssdk.services.kinesis.KinesisClient

/**
 * Where a shard's part of a batch read ends, found without reading its records (docs/design/offsets.md, "One read
 * per record"): the first record that arrived after `arrivedBy` (`Before`), or, with none yet, every record that
 * arrived by then (`ArrivedBy`: the shard's tip, Kinesis' clock having passed `arrivedBy`), or the end of a closed
 * shard whose records all arrived by then (`Ended`).
 */
sealed trait ProbedEnd
object ProbedEnd {
  final case class Before(sequenceNumber: String) extends ProbedEnd
  final case class ArrivedBy(millis: Long) extends ProbedEnd
  case object Ended extends ProbedEnd
}

/**
 * Probes shards' ends on the driver: per shard a GetShardIterator `AT_TIMESTAMP` just after the end time and a
 * GetRecords with Limit 1 (a few more only when Kinesis answers empty short of its tip). The calls are small and
 * independent, so a bounded pool runs them: no Spark job to schedule, nothing to ship; at 10,000 shards and
 * 20 ms a call, 32 threads take about 15 s, within each shard's own 5 calls a second.
 */
object ShardEndProbe {
  /** Probes running at once. */
  val Threads = 32
  /** GetRecords calls one probe makes at most while Kinesis answers empty short of the tip. */
  val MaxCalls = 5

  def probe(config: SourceConfig, keys: Seq[ShardKey], arrivedBy: Long): Map[ShardKey, ProbedEnd] =
    if (keys.isEmpty) Map.empty
    else {
      val client = KinesisClientFactory.sync(config.connection)
      val pool = Executors.newFixedThreadPool(math.min(Threads, keys.size), daemon)
      implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
      try {
        val all = Future.traverse(keys)(k => Future(k -> one(client, config, k, arrivedBy)))
        Await.result(all, Duration.Inf).toMap
      } finally pool.shutdownNow()
    }

  private def one(client: KinesisClient, config: SourceConfig, key: ShardKey, arrivedBy: Long): ProbedEnd =
    try {
      val request = ShardReader.iteratorRequest(config, key, AtTimestamp(arrivedBy + 1))
      var iterator: String = client.getShardIterator(request).shardIterator()
      var calls = 0
      var end: Option[ProbedEnd] = None
      while (end.isEmpty) {
        if (calls > 0) TimeUnit.NANOSECONDS.sleep(config.minFetchPeriod.toNanos) // the shard's 5 calls a second
        val answer = client.getRecords(ShardReader.getRecords(iterator, 1, config.streamArn(key.stream)))
        calls += 1
        iterator = answer.nextShardIterator()
        end =
          if (!answer.records().isEmpty) Some(ProbedEnd.Before(answer.records().get(0).sequenceNumber()))
          else if (iterator == null) Some(ProbedEnd.Ended)
          // Empty at the tip: no record arrived after the end time yet, and none will (Kinesis' clock passed it).
          // Empty short of it after a few calls: the end time bounds the read alone.
          else if (Option(answer.millisBehindLatest()).forall(_ == 0L) || calls >= MaxCalls)
            Some(ProbedEnd.ArrivedBy(arrivedBy))
          else None
      }
      end.get
    } catch {
      case e: software.amazon.awssdk.core.exception.SdkException => throw SnapshotJob.failure(key, e)
    }

  private val daemon: java.util.concurrent.ThreadFactory = { r: Runnable =>
    val t = new Thread(r, "kinesis-batch-end-probe")
    t.setDaemon(true)
    t
  }
}
