package io.github.sparkkinesis.source

import io.github.sparkkinesis.client.CallTally
import io.github.sparkkinesis.options.OptionReader
import io.github.sparkkinesis.source.ShardPosition._
import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.executor.{
  BufferedPart,
  CallPlan,
  FeedState,
  Poll,
  PollingFetcher,
  RecordBlock,
  ShardFeed,
  UserRecord
}

/** The feed's bookkeeping: what a snapshot may plan, what a commit frees, what a batch task finds buffered. */
class ShardFeedSuite extends AnyFunSuite {
  private val key = ShardKey("s", "shardId-000000000000")
  private val config = SourceConfig(OptionReader(Map("streamName" -> "s")))

  private def feed(start: ShardPosition = TrimHorizon, runEnd: Option[RunEnd] = None, spill: Boolean = false) =
    new ShardFeed(
      "src",
      key,
      start,
      config,
      runEnd,
      spill,
      new PollingFetcher(null, config, key, start, new CallTally, None))

  /** Records with sequence numbers `from` until `until`, arrival time = sequence number. */
  private def records(seqs: Range, sub: Long = 0): IndexedSeq[UserRecord] =
    seqs.map(i => UserRecord(s"k$i", Array.fill[Byte](10)(1), f"$i%05d", sub, i.toLong))
  private def poll(rs: IndexedSeq[UserRecord], behind: Long = 0, ended: Boolean = false, filled: Boolean = false) =
    Poll(RecordBlock.of(rs), rs.map(r => r.data.length + r.partitionKey.length).sum.toLong, behind, ended, filled)
  private def at(i: Int) = After(f"$i%05d", 0)
  /** A buffered part as positions (records hold arrays, which compare by reference). */
  private def positions(p: Option[BufferedPart]) =
    p.map(b => (b.records.flatMap(_.iterator.map(_.position)), b.resumeFrom))
  private def held(seqs: Range, resume: Option[ShardPosition]) = Some((seqs.map(at), resume))
  private val all = Long.MaxValue

  test("a snapshot plans everything held, at the tip it is caught up") {
    val f = feed()
    assert(!f.hasPolled && !f.hasRecordsAfter(TrimHorizon))
    f.onPoll(poll(records(1 to 3), behind = 5000), _ => true)
    assert(f.hasPolled && f.state(all, all) == FeedState(at(3), 3, 3 * 12, Some(5000), caughtUp = false, f.bytesHeld))
    f.onPoll(poll(records(4 to 5)), _ => true)
    val s = f.state(all, all)
    assert(s.last == at(5) && s.records == 5 && s.caughtUp)
  }

  test("a quiet shard is told without its state, and agrees with it; the wait's look holds the five answers") {
    def quietByState(f: ShardFeed, from: ShardPosition) = {
      val r = SnapshotRequest(key, from, all, all)
      ShardSnapshot(key, from, f.state(all, all), "e", Some(f.heldTo)) == ShardSnapshot.quiet(r, "e")
    }
    val f = feed(at(0))
    assert(!f.quietAt(at(0)) && !quietByState(f, at(0)), "never answered: not known to be at its tip")
    assert(f.look(at(0)) == 0)
    f.onPoll(poll(IndexedSeq.empty), _ => true)
    assert(f.quietAt(at(0)) && quietByState(f, at(0)))
    assert(f.look(at(0)) == (ShardFeed.Polled | ShardFeed.CaughtUp))
    f.onPoll(poll(records(1 to 2)), _ => true)
    assert(!f.quietAt(at(0)) && !quietByState(f, at(0)))
    assert(f.look(at(0)) == (ShardFeed.Polled | ShardFeed.CaughtUp | ShardFeed.HasData))
    assert(f.commit(at(2)).isDefined)
    assert(f.quietAt(at(2)) && quietByState(f, at(2)), "its records committed, at the tip again")
    val behind = feed(at(0))
    behind.onPoll(poll(IndexedSeq.empty, behind = 3000), _ => true)
    assert(!behind.quietAt(at(0)) && !quietByState(behind, at(0)))
    assert(behind.look(at(0)) == ShardFeed.Polled)
  }

  test("an answer as long as its Limit is not the tip, even at 0 ms behind (the rest arrived in the same ms)") {
    val f = feed()
    f.onPoll(poll(records(1 to 5), filled = true), _ => true)
    assert(!f.caughtUp && !f.state(all, all).caughtUp, "more records may follow at once")
    f.onPoll(poll(records(6 to 7)), _ => true)
    assert(f.caughtUp && f.state(all, all).last == at(7))
    f.onPoll(poll(IndexedSeq.empty, filled = false), _ => true)
    assert(f.caughtUp, "an empty answer at 0 ms behind is the tip")
  }

  test("a read limit ends the plan at a held record (at least one), and the rest stays for the next batch") {
    val f = feed()
    f.onPoll(poll(records(1 to 10)), _ => true)
    assert(f.state(4, all).last == at(4) && !f.state(4, all).caughtUp)
    assert(f.state(all, 30).last == at(2), "12 bytes a record: two fit in 30")
    assert(f.state(all, 1).last == at(1), "the first record always fits")
    assert(f.commit(at(4)).exists(_ > 0))
    assert(f.state(all, all) match { case FeedState(last, 6, _, _, true, _) => last == at(10); case _ => false })
  }

  test("a capped batch's share is cut at a record from where the snapshot saw the feed start, never elsewhere") {
    val f = feed()
    f.onPoll(poll(records(1 to 10)), _ => true)
    f.onPoll(poll(records(11 to 12)), _ => true)
    assert(f.heldTo == at(12), "what the executor holds, whatever a share takes")
    assert(f.stateFrom(TrimHorizon, 7, all).map(s => (s.last, s.records)).contains((at(7), 7L)))
    assert(f.stateFrom(TrimHorizon, 0, all).map(_.last).contains(TrimHorizon), "a share of nothing takes nothing")
    assert(f.commit(at(4)).exists(_ > 0))
    assert(f.stateFrom(TrimHorizon, 7, all).isEmpty, "the feed moved on: no cut from a start it no longer has")
    assert(f.stateFrom(at(4), 3, all).map(_.last).contains(at(7)))
  }

  test("a commit frees what was planned; a position the feed never reached is refused") {
    val f = feed()
    f.onPoll(poll(records(1 to 4)), _ => true)
    val before = f.bytesHeld
    assert(f.commit(TrimHorizon).contains(0L), "the feed's own start")
    val freed = f.commit(at(2)).get
    assert(freed == before / 2 && f.bytesHeld == before - freed)
    assert(f.commit(at(3)).isDefined && f.commit(at(4)).isDefined && f.bytesHeld == 0)
    assert(f.commit(at(7)).isEmpty && f.commit(After("00001", 0)).isEmpty)
  }

  test("inside a KPL aggregate: a plan may end between sub-records and the next resumes there") {
    val f = feed()
    val agg = (0 to 3).map(sub => UserRecord("k", Array[Byte](1), "00009", sub.toLong, 9L))
    f.onPoll(poll(agg), _ => true)
    assert(f.state(2, all).last == After("00009", 1))
    assert(f.commit(After("00009", 1)).isDefined)
    assert(f.part(After("00009", 1), After("00009", 3)).map(_.records.flatMap(_.iterator.map(_.subSequenceNumber)))
      .contains(Seq(2L, 3L)))
  }

  test("AvailableNow: the feed ends at its first answer at the tip, whatever the records' arrival times say") {
    val f = feed(runEnd = Some(RunEnd(None)))
    f.onPoll(poll(records(1 to 3), behind = 5000), _ => true)
    assert(!f.finished && !f.caughtUp, "behind the tip: reading goes on")
    f.onPoll(poll(records(4 to 6), filled = true), _ => true)
    assert(!f.finished, "an answer its Limit cut short is not the tip")
    // Arrival times (here = sequence numbers) far past any clock reading do not cut the run short.
    f.onPoll(poll(records(99990 to 99992)), _ => true)
    val s = f.state(all, all)
    assert(s.last == at(99992) && s.records == 9 && s.caughtUp && f.finished)
    val streaming = feed()
    streaming.onPoll(poll(records(1 to 3)), _ => true)
    assert(streaming.caughtUp && !streaming.finished, "a streaming feed at its tip keeps polling")
  }

  test("AvailableNow behind the tip: a record that arrived after the start's bound on Kinesis' clock ends the feed") {
    val f = feed(runEnd = Some(RunEnd(Some(3L))))
    f.onPoll(poll(records(1 to 5), behind = 5000), _ => true)
    val s = f.state(all, all)
    assert(s.last == at(3) && s.records == 3 && s.caughtUp && f.finished, "records 4 and 5 were put after the start")
  }

  test("a shard the listing shows closed is caught up only once its end is read, not at an answer at its tip") {
    val f = feed(runEnd = Some(RunEnd(None)))
    f.markClosed()
    f.onPoll(poll(records(1 to 2)), _ => true)
    assert(!f.caughtUp && !f.finished && !f.state(all, all).caughtUp, "the last records came without the end")
    f.onPoll(poll(IndexedSeq.empty, ended = true), _ => true)
    assert(f.state(all, all).last == ShardEnd && f.caughtUp && f.finished)
  }

  test("a closed shard: its last records, then shard_end") {
    val f = feed()
    f.onPoll(poll(records(1 to 2), ended = true), _ => true)
    assert(f.state(all, all).last == ShardEnd && f.ended && f.finished && f.caughtUp)
    assert(f.state(1, all).last == at(1), "a capped plan stops before the end")
    assert(positions(f.part(TrimHorizon, ShardEnd)) == held(1 to 2, None))
  }

  test("a batch task finds its range held, or learns where to go on reading from Kinesis") {
    val f = feed()
    f.onPoll(poll(records(1 to 6)), _ => true)
    assert(positions(f.part(TrimHorizon, at(4))) == held(1 to 4, None))
    assert(f.part(at(2), at(4)).isEmpty, "the feed does not start there")
    assert(positions(f.part(TrimHorizon, at(9))) == held(1 to 6, Some(at(6))))
  }

  test("spill (batch reads): once the buffer is full, records are passed over, never held after a gap") {
    val f = feed(spill = true)
    var room = 3 * RecordBlock.of(records(1 to 1)).heapBytes(0)
    f.onPoll(poll(records(1 to 5)), size => size <= room)
    assert(f.state(all, all).last == at(5), "the feed read to 5")
    room = Long.MaxValue
    f.onPoll(poll(records(6 to 7)), size => size <= room)
    assert(positions(f.part(TrimHorizon, at(7))) == held(1 to 3, Some(at(3))))
  }

  test("idle answers are counted, so the engine can poll an idle shard less often") {
    val f = feed()
    f.onPoll(poll(IndexedSeq.empty), _ => true)
    f.onPoll(poll(IndexedSeq.empty), _ => true)
    assert(f.idlePolls == 2 && f.caughtUp)
    f.onPoll(poll(records(1 to 1)), _ => true)
    assert(f.idlePolls == 0)
    f.onPoll(poll(IndexedSeq.empty, behind = 10), _ => true)
    assert(f.idlePolls == 0 && !f.caughtUp, "behind the tip is not idle")
  }

  test("an idle shard is polled sooner after its first empty answers, then every second, however long its silence") {
    import java.time.Duration.{ofMillis, ofSeconds}
    def wait(polls: Int, max: java.time.Duration = ofSeconds(10), idleFeeds: Int = 1, capsBudget: Boolean = true) =
      ShardFeed.idleWaitNanos(polls, ofMillis(200), max, 0L, ShardFeed.idleBudgetNanos(idleFeeds), capsBudget) / 1000000
    assert(wait(0) == 0, "not idle: pacing alone")
    assert(wait(1) == 400 && wait(2) == 800 && wait(3) == 1000, "200 ms doubling up to a second")
    assert(wait(30) == 1000 && wait(1000) == 1000, "then every second, however long its silence")
    assert(
      wait(100, idleFeeds = ShardFeed.IdleCallsPerSecond) == 1000,
      "as many idle shards as the budget: every second")
    assert(wait(100, idleFeeds = 1000) == 2000, "a thousand share the budget: every 2 s, 500 calls a second")
    assert(wait(100, idleFeeds = 1300) == 2750, "in whole ticks, rounded up: never over the budget")
    assert(
      wait(1, idleFeeds = 10000) == 400 && wait(2, idleFeeds = 10000) == 800 && wait(3, idleFeeds = 1000) == 2000,
      "the budget spaces a shard after three empty answers, not one: a sparse shard finds nothing now and then"
    )
    assert(wait(100, idleFeeds = 10000) == 10000, "never longer than a maxIdlePollInterval the user set")
    assert(
      wait(100, idleFeeds = 10000, capsBudget = false) == 20000,
      "the default cap gives way to the budget: 10,000 idle shards every 20 s, still 500 calls a second")
    assert(
      wait(100, idleFeeds = 5000, capsBudget = false) == 10000 && wait(2, capsBudget = false) == 800,
      "up to 5,000 the default changes nothing")
    assert(wait(100, idleFeeds = 100000, capsBudget = false) == 60000, "at most a minute: iterators live 5")
    assert(wait(100, ofSeconds(1), 1000) == 1000 && wait(1, ofMillis(300)) == 300, "a lower maximum wins")
  }

  test("a sparse shard at its tip is polled about as often as its records arrive, at least every second") {
    import java.time.Duration.{ofMillis, ofSeconds}
    val ms = 1000000L
    def sparse(records: Int, sinceMillis: Long, max: java.time.Duration = ofSeconds(10)) =
      ShardFeed.sparseWaitNanos(records, sinceMillis * ms, max) / ms
    assert(sparse(1, 800) == 800 && sparse(2, 800) == 400, "the time one record took to arrive")
    assert(sparse(1, 1400) == 1000, "at most a second")
    assert(sparse(1, 1400, ofMillis(200)) == 200, "real-time mode's lower maximum wins")
    assert(sparse(0, 800) == 0 && sparse(3, 0) == 0, "no records, or no call before: pacing alone")
    assert(sparse(1000, 200) == 0, "a busy shard: pacing alone")
    def idle(polls: Int, sparseMillis: Long) =
      ShardFeed.idleWaitNanos(polls, ofMillis(200), ofSeconds(10), sparseMillis * ms) / ms
    assert(
      idle(1, 1000) == 1000 && idle(1, 300) == 400 && idle(3, 300) == 1000,
      "empty answers after it wait no less, and still ramp up to a second")
    assert(idle(0, 1000) == 0, "not idle: the idle rule sets nothing")
  }

  test("idle waits of a second or more end on the tick before, so silent shards are polled together") {
    val t = ShardFeed.BurstTick.toNanos
    val s = 1000000000L
    val origin = -7 * s + 123
    def aligned(nanos: Long, idle: Long, earliest: Long = Long.MinValue) =
      ShardFeed.burstAligned(nanos, idle, earliest, origin)
    assert(aligned(origin + 43 * t - 1, 10 * s) == origin + 42 * t, "sooner, never later")
    assert(aligned(origin + 43 * t, 10 * s) == origin + 43 * t, "already on a tick")
    assert(aligned(origin + 42 * t + 1, s) == origin + 42 * t, "from BurstFrom (a second) on")
    assert(aligned(origin + 42 * t + 1, s - 1) == origin + 42 * t + 1, "a shorter wait (the ramp's first polls)")
    assert(aligned(origin + 42 * t + 1, 0) == origin + 42 * t + 1, "pacing alone")
    assert(aligned(origin - t / 2, 10 * s) == origin - t, "before the origin (nanoTime may be negative)")
    assert(aligned(origin + 42 * t + 1, 10 * s, earliest = origin + 42 * t) == origin + 42 * t, "pacing allows it")
    assert(
      aligned(origin + 42 * t + 1, 10 * s, earliest = origin + 42 * t + 1) == origin + 42 * t + 1,
      "never inside the pacing (a minFetchPeriod longer than the idle wait)")
    assert(s % t == 0 && ShardFeed.idleBudgetNanos(777) % t == 0, "a second and the budget's waits are whole ticks")
  }

  test("a failed feed is finished, refuses commits and offers no records") {
    val f = feed()
    f.onPoll(poll(records(1 to 2)), _ => true)
    f.onFailure(new IllegalStateException("boom"))
    assert(f.finished && f.failed.isDefined && f.commit(at(1)).isEmpty && f.part(TrimHorizon, at(2)).isEmpty)
  }

  test("a call aims at a second of quota, fits the free buffer once decoded, and a quiet shard asks for little") {
    val f = feed()
    val mib = 1L << 20
    val guess = ShardFeed.InitialRecordBytesGuess
    assert(f.nextCall(Long.MaxValue, 2 * mib) == CallPlan((2 * mib / guess).toInt, (2 * mib / guess) * guess))
    assert(f.nextCall(30 * guess, 2 * mib).limit == 10, "the answer and its decoding fit the free buffer")
    assert(f.nextCall(0, 2 * mib).limit == 1, "at least one record")
    f.onPoll(poll((1 to 2).map(i => UserRecord("k", new Array[Byte](1 << 18), f"$i%05d", 0, i.toLong))), _ => true)
    assert(f.nextCall(Long.MaxValue, 2 * mib) == CallPlan(4, 4 * ((1 << 18) + 1)), "about twice the last answer")
    f.onPoll(poll((3 to 10).map(i => UserRecord("k", new Array[Byte](1 << 18), f"$i%05d", 0, i.toLong))), _ => true)
    assert(f.nextCall(Long.MaxValue, 2 * mib).limit == 7, "a full answer: the target again (2 MiB of 256 KiB records)")
    assert(
      f.nextCall(Long.MaxValue, 100 * mib).answerBytes <= ShardFeed.MaxResponseBytes,
      "one answer is at most 10 MiB")
    f.onPoll(poll(IndexedSeq.empty), _ => true)
    assert(
      f.nextCall(Long.MaxValue, 2 * mib) == CallPlan(1, (1 << 18) + 1),
      "a quiet shard holds little space for its next call (here: one record of its size)")
  }

  test("a first call aims at no more than its part of the room; later calls are not held to it") {
    val f = feed()
    val guess = ShardFeed.InitialRecordBytesGuess
    assert(f.nextCall(Long.MaxValue, 2L << 20, firstShareBytes = 64 * 1024) == CallPlan(6, 6 * guess))
    assert(f.nextCall(Long.MaxValue, 2L << 20, firstShareBytes = 0).limit == 1, "at least one record")
    f.onPoll(poll((1 to 2).map(i => UserRecord("k", new Array[Byte](1 << 18), f"$i%05d", 0, i.toLong))), _ => true)
    assert(f.nextCall(Long.MaxValue, 2L << 20, firstShareBytes = 64 * 1024).limit == 4, "twice the last answer")
  }

  test("a call waits for room for a quarter of a second of quota while behind, for none at the tip or first") {
    val f = feed()
    val mib = 1L << 20
    def kib(from: Int, n: Int) =
      (from until from + n).map(i => UserRecord("k", new Array[Byte](1023), f"$i%05d", 0, i.toLong))
    assert(f.minCallBytes(2 * mib, 8 * mib) == 0, "a first call takes whatever room there is")
    f.onPoll(poll(kib(1, 16), behind = 60000), _ => true)
    assert(f.minCallBytes(2 * mib, 8 * mib) == mib / 2, "behind its tip: a quarter of a second of the quota")
    f.onPoll(poll(kib(17, 2), behind = 50000), _ => true)
    assert(f.minCallBytes(2 * mib, 8 * mib) == mib / 2, "small answers while behind do not shrink the next")
    assert(f.minCallBytes(2 * mib, 32 * 1024) == 8 * 1024, "a 1 MiB buffer's in-flight room still lets a call go")
    f.onPoll(poll(IndexedSeq.empty), _ => true)
    assert(f.minCallBytes(2 * mib, 8 * mib) == 0, "a quiet shard at its tip waits for no room")
    f.onPoll(poll(kib(19, 100)), _ => true)
    assert(f.minCallBytes(2 * mib, 8 * mib) == 0, "at its tip with traffic: none either")
  }

  test("records of 100 bytes: a call asks for the 10,000-record maximum once their size is known") {
    val f = feed()
    f.onPoll(poll((1 to 1000).map(i => UserRecord("k", new Array[Byte](99), f"$i%05d", 0, i.toLong))), _ => true)
    assert(f.nextCall(Long.MaxValue, 2L << 20).limit == 2000, "twice the last answer")
    f.onPoll(poll((1001 to 3000).map(i => UserRecord("k", new Array[Byte](99), f"$i%05d", 0, i.toLong))), _ => true)
    assert(f.nextCall(Long.MaxValue, 2L << 20).limit == 4000)
    f.onPoll(poll((3001 to 7000).map(i => UserRecord("k", new Array[Byte](99), f"$i%05d", 0, i.toLong))), _ => true)
    assert(f.nextCall(Long.MaxValue, 2L << 20).limit == 8000)
    f.onPoll(poll((7001 to 15000).map(i => UserRecord("k", new Array[Byte](99), f"$i%05d", 0, i.toLong))), _ => true)
    assert(f.nextCall(Long.MaxValue, 2L << 20).limit == 10000)
  }

}
