package io.github.sparkkinesis.source
package executor

import java.util.concurrent.{CompletableFuture, CompletionException, ExecutionException, ExecutorService}

import io.github.sparkkinesis.DaemonThreads
import io.github.sparkkinesis.client.CallTally
import software.amazon.awssdk.services.kinesis.KinesisClient

/**
 * One read strategy of the prefetcher: a shard read forward with GetRecords, each call a [[ShardReader]] call on
 * one of the JVM's fetch threads through the SDK's sync client. Enhanced fan-out is the other strategy behind the
 * same [[ShardFeed]] ([[FanOutFetcher]]).
 *
 * Why not the async client, which needs no thread per call in flight: draining 100 B records, the same GetRecords
 * calls cost about twice the CPU per record through it (Netty gathering each answer of up to 10 MiB, then the
 * SDK decoding it) as through the sync client (Apache HttpClient 5), and decoding answers is most of what
 * reading costs. The [[Prefetcher]] keeps at most [[Prefetcher.callSlots]] polling calls in flight per
 * JVM, so that many fetch threads at most are busy; they end after a minute without work.
 *
 * One call at a time per fetcher (the feed sees to it); each call sees the previous one's state through the
 * futures and the executors that chain them.
 */
final class PollingFetcher(
    client: KinesisClient,
    config: SourceConfig,
    key: ShardKey,
    start: ShardPosition,
    tally: CallTally,
    hashKeys: Option[HashKeySpan]) extends ShardFetcher {
  private val reader = new ShardReader(client, config, key, start, Some(tally), paced = false, hashKeys)

  override def pushed: Boolean = false

  /** One GetRecords call of at most `limit` records after the last record returned. */
  override def poll(limit: Int): CompletableFuture[Poll] =
    CompletableFuture.supplyAsync(() => reader.poll(limit), PollingFetcher.pool)
}

object PollingFetcher {
  private lazy val pool: ExecutorService = DaemonThreads.cachedPool("kinesis-fetch")

  /** The failure inside the wrappers futures add. */
  def cause(e: Throwable): Throwable = e match {
    case c @ (_: CompletionException | _: ExecutionException) if c.getCause != null => cause(c.getCause)
    case other => other
  }
}
