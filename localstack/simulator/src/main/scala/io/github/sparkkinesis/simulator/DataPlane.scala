package io.github.sparkkinesis.simulator

import DataPlane.Entry
import Out._

/** Writing and reading records: PutRecord(s), GetShardIterator and GetRecords, with the per-shard quotas. */
final class DataPlane(sim: Simulator) {
  private val MaxRecordsPerRequest = 500
  private val MaxRequestBytes = 10 * 1024 * 1024
  private val MaxDataBytes = 10 * 1024 * 1024
  private val MaxGetRecordsBytes = 10 * 1024 * 1024
  private val MaxGetRecordsLimit = 10000


  private def entry(req: Req, stream: StreamState): Entry = {
    val key = req.str("PartitionKey")
    if (key.isEmpty || key.length > 256) throw KinesisError.validation(
      s"1 validation error detected: Value '$key' at 'partitionKey' failed to satisfy constraint: Member must have " +
        "length between 1 and 256")
    val data = req.blob("Data")
    if (data.length > MaxDataBytes) throw KinesisError.validation(
      s"1 validation error detected: Value at 'data' failed to satisfy constraint: Member must have length less " +
        s"than or equal to $MaxDataBytes")
    if (data.length + key.length > stream.maxRecordSizeBytes) throw KinesisError.invalid(
      s"Record size ${data.length + key.length} bytes (data plus partition key) exceeds the maximum record size " +
        s"of stream ${stream.name}: ${stream.maxRecordSizeKiB} KiB.")
    val hash = req.optStr("ExplicitHashKey").map(HashKeys.parseExplicit).getOrElse(HashKeys.ofPartitionKey(key))
    Entry(key, data, hash)
  }

  private def throttledMessage(stream: StreamState, shard: Shard): String =
    s"Rate exceeded for shard ${shard.id} in stream ${stream.name} under account ${StreamState.Account}."

  /** Appends if the shard's write quota admits the record; None when it is throttled. */
  private def append(stream: StreamState, shard: Shard, e: Entry, now: Long): Option[StoredRecord] = {
    val quotas = sim.settings.quotas
    val counters = sim.counters.shard(stream.name, shard.id)
    val size = e.data.length + e.partitionKey.length
    if (quotas.enabled) {
      val buckets = shard.quotaBuckets(quotas, now)
      if (quotas.writeRecords && !buckets.writeRecords.take(1, now)) {
        counters.throttledPutRecords += 1
        return None
      }
      if (quotas.writeBytes && !buckets.writeBytes.takeOversize(size, now)) {
        // A refused record counts against neither limit on AWS.
        if (quotas.writeRecords) buckets.writeRecords.giveBack(1)
        counters.throttledPutRecords += 1
        return None
      }
    }
    val arrival = math.max(now, shard.log.lastArrivalMillis)
    val record = new StoredRecord(sim.nextCounter(), arrival, e.partitionKey, e.data)
    shard.log.append(record)
    counters.putRecords += 1
    counters.putBytes += size
    Some(record)
  }

  def putRecord(req: Req): Out = {
    val stream = sim.stream(req)
    val e = entry(req, stream)
    val now = sim.now()
    sim.trimFor(stream, now, None)
    val shard = stream.route(e.hash)
    val record = append(stream, shard, e, now).getOrElse(throw KinesisError.throughput(throttledMessage(stream, shard)))
    obj("ShardId" -> Str(shard.id), "SequenceNumber" -> Str(record.sequenceNumber),
      "EncryptionType" -> Str("NONE"))
  }

  def putRecords(req: Req): Out = {
    val stream = sim.stream(req)
    val records = req.list("Records")
    if (records.isEmpty || records.size > MaxRecordsPerRequest) throw KinesisError.validation(
      s"1 validation error detected: Value '${records.size} records' at 'records' failed to satisfy constraint: " +
        s"Member must have length less than or equal to $MaxRecordsPerRequest and greater than or equal to 1")
    val entries = records.map(entry(_, stream))
    val total = entries.iterator.map(e => e.data.length.toLong + e.partitionKey.length).sum
    if (total > MaxRequestBytes) throw KinesisError.invalid(
      s"Records size $total bytes exceeds the PutRecords request limit of $MaxRequestBytes bytes.")
    val now = sim.now()
    sim.trimFor(stream, now, None)
    var failed = 0
    val results = entries.toIndexedSeq.map { e =>
      val shard = stream.route(e.hash)
      if (sim.faults.failRecord(stream.name, e.partitionKey)) {
        failed += 1
        sim.counters.shard(stream.name, shard.id).failedPutRecords += 1
        Failed("InternalFailure", "Internal service failure.")
      } else append(stream, shard, e, now) match {
        case Some(r) => Accepted(shard.id, r)
        case None =>
          failed += 1
          Failed("ProvisionedThroughputExceededException", throttledMessage(stream, shard))
      }
    }
    obj("FailedRecordCount" -> Num(failed), "Records" -> PutResults(results), "EncryptionType" -> Str("NONE"))
  }

  def getShardIterator(req: Req): Out = {
    val stream = sim.stream(req)
    val shard = sim.shard(stream, req.str("ShardId"))
    val now = sim.now()
    sim.trimFor(stream, now, Some(shard))
    val counters = sim.counters.shard(stream.name, shard.id)
    counters.getShardIteratorCalls += 1
    val quotas = sim.settings.quotas
    if (quotas.on(quotas.getShardIterator) && !shard.quotaBuckets(quotas, now).getShardIterator.take(1, now)) {
      counters.throttledGetShardIteratorCalls += 1
      throw KinesisError.throughput(throttledMessage(stream, shard))
    }
    val position = startCounter(stream, shard, req.str("ShardIteratorType"), req.optStr("StartingSequenceNumber"),
      req.optTimestampMillis("Timestamp"), "StartingSequenceNumber")
    obj("ShardIterator" -> Str(ShardIterator(stream.key, stream.incarnation, shard.id, position, now, sim.nextIteratorSerial()).encode))
  }

  /**
   * The counter reading starts at, for GetShardIterator's and SubscribeToShard's starting positions alike.
   * `field`: how the request names the sequence number, for messages.
   */
  def startCounter(stream: StreamState, shard: Shard, kind: String, sequenceNumber: Option[String],
      timestampMillis: => Option[Long], field: String): Long = {
    val afterTip = shard.endCounter.getOrElse(sim.lastCounter + 1)
    def sequence(): Long = {
      val c = SequenceNumbers.parse(sequenceNumber.getOrElse(throw KinesisError.invalid(
        s"$field is required for AT_SEQUENCE_NUMBER and AFTER_SEQUENCE_NUMBER")), field)
      if (c < shard.startCounter || shard.endCounter.exists(c > _)) throw KinesisError.invalid(
        s"$field ${SequenceNumbers.format(c)} used on shard ${shard.id} in " +
          s"stream ${stream.name} under account ${StreamState.Account} is invalid because it did not come from this shard.")
      c
    }
    kind match {
      case "TRIM_HORIZON" => shard.startCounter
      case "LATEST" => afterTip
      case "AT_SEQUENCE_NUMBER" => sequence()
      case "AFTER_SEQUENCE_NUMBER" => sequence() + 1
      case "AT_TIMESTAMP" =>
        val ts = timestampMillis.getOrElse(throw KinesisError.invalid(
          "Timestamp is required for AT_TIMESTAMP"))
        val i = shard.log.indexAtTime(ts)
        if (i < shard.log.size) shard.log(i).counter else afterTip
      case other => throw KinesisError.validation(
        s"1 validation error detected: Value '$other' at 'shardIteratorType' failed to satisfy constraint: Member " +
          "must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, AT_SEQUENCE_NUMBER, AT_TIMESTAMP, TRIM_HORIZON, LATEST]")
    }
  }

  def getRecords(req: Req): Out = {
    val iterator = ShardIterator.decode(req.str("ShardIterator"))
    val now = sim.now()
    val stream = sim.streams.get(iterator.stream).filter(_.incarnation == iterator.incarnation).getOrElse(
      throw KinesisError.notFound(s"Stream ${iterator.stream} under account ${StreamState.Account} not found."))
    val shard = sim.shard(stream, iterator.shardId)
    val counters = sim.counters.shard(stream.name, shard.id)
    counters.getRecordsCalls += 1
    val expiry = sim.settings.iteratorExpiryMillis
    if (iterator.serial <= sim.iteratorsExpiredThrough)
      throw KinesisError.expiredIterator("Iterator expired. The simulator's admin API expired every iterator issued " +
        "before its call (POST /_sim/iterators/expire): get a new one from the last sequence number read.")
    if (now - iterator.issuedMillis > expiry)
      throw KinesisError.expiredIterator(s"Iterator expired. The iterator was created at time " +
        s"${java.time.Instant.ofEpochMilli(iterator.issuedMillis)} while right now it is ${java.time.Instant.ofEpochMilli(now)} " +
        s"which is further in the future than the tolerated delay of $expiry milliseconds.")
    val limit = req.optInt("Limit").getOrElse(MaxGetRecordsLimit)
    if (limit < 1 || limit > MaxGetRecordsLimit) throw KinesisError.invalid(
      s"Limit $limit must be between 1 and $MaxGetRecordsLimit")
    val quotas = sim.settings.quotas
    val buckets = if (quotas.enabled) Some(shard.quotaBuckets(quotas, now)) else None
    buckets.foreach { b =>
      if ((quotas.readCalls && !b.readCalls.take(1, now)) || (quotas.readBytes && !b.readBytes.hasTokens(now))) {
        counters.throttledGetRecordsCalls += 1
        throw KinesisError.throughput(throttledMessage(stream, shard))
      }
    }
    sim.trimFor(stream, now, Some(shard))
    val log = shard.log
    val from = log.indexAtCounter(iterator.position)
    var end = from
    var bytes = 0L
    while (end < log.size && end - from < limit && (end == from || bytes + log(end).size <= MaxGetRecordsBytes)) {
      bytes += log(end).size
      end += 1
    }
    val records = (from until end).map(log(_))
    buckets.foreach(b => if (quotas.readBytes) b.readBytes.takeIntoDebt(bytes.toDouble, now))
    counters.getRecordsRecords += records.size
    counters.getRecordsBytes += bytes
    // With splitEndAnswer the last records come without the end, which the next call (then empty) reports.
    val atEndOfClosed = !shard.isOpen && end == log.size && (records.isEmpty || !sim.settings.splitEndAnswer)
    val next = if (atEndOfClosed) None else {
      val position = if (records.isEmpty) math.max(iterator.position, 0L) else records.last.counter + 1
      Some(Str(ShardIterator(stream.key, stream.incarnation, shard.id, position, now, sim.nextIteratorSerial()).encode))
    }
    // Never negative: after the clock offset moved back, stored arrival times can be ahead of now.
    val behind = if (end < log.size) math.max(0L, now - log(end).arrivalMillis) else 0L
    val children = if (atEndOfClosed) Some(Arr(shard.childIds.flatMap(stream.shard).map(ShardViews.child))) else None
    obj(
      "Records" -> Records(records),
      "NextShardIterator" -> next,
      "MillisBehindLatest" -> Num(behind),
      "ChildShards" -> children
    )
  }
}

object DataPlane {
  private final case class Entry(partitionKey: String, data: Array[Byte], hash: BigInt)
}
