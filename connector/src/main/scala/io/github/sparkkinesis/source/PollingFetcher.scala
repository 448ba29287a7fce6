package io.github.sparkkinesis.source

import java.util.concurrent.{CompletableFuture, CompletionException, ExecutionException}

import io.github.sparkkinesis.client.{CallTally, SdkCallStats}
import io.github.sparkkinesis.source.ShardPosition._
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration
import org.apache.spark.internal.Logging
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient
import software.amazon.awssdk.services.kinesis.model.{ExpiredIteratorException, KinesisException}

/**
 * One read strategy of the prefetcher: a shard read forward with GetRecords on the async client, so one executor
 * keeps calls to many shards in flight without a thread each. Enhanced fan-out is the other strategy behind
 * the same [[ShardFeed]] ([[FanOutFetcher]]). One call at a time per fetcher (the feed sees to it); its state is handed from one
 * call's completion to the next through the futures, which order the accesses.
 */
final class PollingFetcher(client: KinesisAsyncClient, config: SourceConfig, key: ShardKey, start: ShardPosition,
    tally: CallTally) extends ShardFetcher with Logging {

  override def pushed: Boolean = false

  @volatile private var position: ShardPosition = start
  @volatile private var iterator: Option[String] = None
  /** Set on each new iterator: the record Kinesis must return first (see [[ShardReader.checkResumed]]). */
  @volatile private var resumeRecord: Option[String] = None

  /** One GetRecords call of at most `limit` records after the last record returned. */
  override def poll(limit: Int): CompletableFuture[Poll] = poll(limit, renewed = false)

  private def poll(limit: Int, renewed: Boolean): CompletableFuture[Poll] =
    if (position == ShardEnd) CompletableFuture.completedFuture(Poll(RecordBlock.empty, 0, 0, ended = true))
    else currentIterator().thenCompose(it => client.getRecords(ShardReader.getRecords(it, limit).toBuilder
        .overrideConfiguration((o: AwsRequestOverrideConfiguration.Builder) => o.putExecutionAttribute(SdkCallStats.Tally, tally)).build()))
      .thenApply[Poll] { response =>
        resumeRecord = resumeRecord.flatMap(ShardReader.checkResumed(config, key, position, _, response))
        val poll = ShardReader.decode(key, position, response)
        poll.records.lastPosition.foreach(position = _)
        iterator = Option(response.nextShardIterator())
        if (poll.ended) position = ShardEnd
        poll
      }
      .exceptionallyCompose { e =>
        PollingFetcher.cause(e) match {
          case _: ExpiredIteratorException if !renewed =>
            logInfo(s"Shard iterator of $key expired; renewing it from $position")
            iterator = None
            poll(limit, renewed = true)
          case _ => CompletableFuture.failedFuture[Poll](PollingFetcher.cause(e))
        }
      }

  private def currentIterator(): CompletableFuture[String] = iterator match {
    case Some(it) => CompletableFuture.completedFuture(it)
    case None =>
      def request() = client.getShardIterator(ShardReader.iteratorRequest(config, key, position).toBuilder
        .overrideConfiguration((o: AwsRequestOverrideConfiguration.Builder) => o.putExecutionAttribute(SdkCallStats.Tally, tally)).build())
        .thenApply[String](_.shardIterator())
      request().exceptionallyCompose { e =>
        PollingFetcher.cause(e) match {
          case k: KinesisException if ShardReader.isLostPosition(position, k) =>
            position = ShardReader.lostPosition(config, key, position, k) // throws under failOnDataLoss
            request()
          case other => CompletableFuture.failedFuture[String](other)
        }
      }.thenApply[String] { it => iterator = Some(it); resumeRecord = ShardReader.resumeRecord(position); it }
  }
}

object PollingFetcher {
  /** The failure inside the wrappers futures add. */
  def cause(e: Throwable): Throwable = e match {
    case c @ (_: CompletionException | _: ExecutionException) if c.getCause != null => cause(c.getCause)
    case other => other
  }
}
