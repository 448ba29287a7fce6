package io.github.sparkkinesis.simulator

/**
 * The Kinesis operations by `X-Amz-Target` name. Each call runs under the simulator's lock and is counted;
 * errors are counted per operation and stream, throttling separately.
 */
final class KinesisApi(sim: Simulator) {
  private val control = new ControlPlane(sim)
  private val resharding = new Resharding(sim)
  private val data = new DataPlane(sim)
  private val consumers = new Consumers(sim)
  private val subscriptions = new Subscriptions(sim, consumers, data)

  val operations: Map[String, Req => Out] = Map(
    "CreateStream" -> control.createStream,
    "DeleteStream" -> control.deleteStream,
    "DescribeStream" -> control.describeStream,
    "DescribeStreamSummary" -> control.describeStreamSummary,
    "ListStreams" -> control.listStreams,
    "ListShards" -> control.listShards,
    "IncreaseStreamRetentionPeriod" -> control.increaseRetention,
    "DecreaseStreamRetentionPeriod" -> control.decreaseRetention,
    "UpdateMaxRecordSize" -> control.updateMaxRecordSize,
    "SplitShard" -> resharding.splitShard,
    "MergeShards" -> resharding.mergeShards,
    "UpdateShardCount" -> resharding.updateShardCount,
    "PutRecord" -> data.putRecord,
    "PutRecords" -> data.putRecords,
    "GetShardIterator" -> data.getShardIterator,
    "GetRecords" -> data.getRecords,
    "RegisterStreamConsumer" -> consumers.register,
    "DescribeStreamConsumer" -> consumers.describe,
    "ListStreamConsumers" -> consumers.list,
    "DeregisterStreamConsumer" -> consumers.deregister
  )

  private val throttles = Set("ProvisionedThroughputExceededException", "LimitExceededException")

  /** The stream a request is about, for counters and fault rules (GetRecords names it inside its iterator). */
  def streamOf(op: String, req: Req): Option[String] =
    req.optStr("StreamName").orElse(req.optStr("StreamARN").map(_.split("/", 2).last))
      .orElse(req.optStr("ConsumerARN").flatMap(a => try Some(Consumers.streamOf(a)) catch { case _: KinesisError => None }))
      .orElse {
      if (op == "GetRecords") req.optStr("ShardIterator").flatMap(t =>
        try Some(ShardIterator.decode(t).stream) catch { case _: KinesisError => None })
      else None
    }

  def call(op: String, req: Req): Out = counted(op, req)(operations.getOrElse(op, throw KinesisError.unknownOperation(op)))

  /** SubscribeToShard's checks, counted like any call; its events are pushed by a [[SubscriptionPusher]]. */
  def subscribe(req: Req): SubscriptionStart = counted("SubscribeToShard", req)(subscriptions.start)

  private def counted[T](op: String, req: Req)(handler: Req => T): T = {
    val stream = streamOf(op, req)
    sim.lock.synchronized {
      val opCounters = sim.counters.operation(op)
      val streamCounters = stream.map(sim.counters.streamOperation(_, op))
      opCounters.calls += 1
      streamCounters.foreach(_.calls += 1)
      try handler(req)
      catch {
        case e: KinesisError =>
          opCounters.errors += 1
          streamCounters.foreach(_.errors += 1)
          if (throttles(e.errorType)) {
            opCounters.throttled += 1
            streamCounters.foreach(_.throttled += 1)
          }
          throw e
      }
    }
  }

  def countRequest(format: WireFormat): Unit = sim.lock.synchronized(sim.counters.request(format))

  /** Counts a fault against the operation it hit. */
  def countFault(op: String, stream: Option[String]): Unit = sim.lock.synchronized {
    sim.counters.operation(op).faults += 1
    stream.foreach(sim.counters.streamOperation(_, op).faults += 1)
  }
}
