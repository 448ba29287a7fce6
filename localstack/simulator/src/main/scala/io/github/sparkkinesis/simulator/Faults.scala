package io.github.sparkkinesis.simulator

/**
 * Faults a test switches on and off while the server runs. A rule matches requests by operation and stream and
 * fires with its probability (drawn from one generator seeded by the test, so a single client's sequence of calls
 * meets the same faults on every run), at most `maxCount` times.
 */
final case class FaultRule(
    kind: FaultKind,
    operations: Set[String] = Set.empty,
    stream: Option[String] = None,
    probability: Double = 1.0,
    maxCount: Option[Long] = None,
    latencyMillis: Long = 0,
    hangMillis: Long = 60000,
    partitionKeys: Set[String] = Set.empty,
    afterEvents: Int = 1,
    exceptionType: String = "InternalFailure") {
  require(probability >= 0 && probability <= 1, s"probability must be in [0, 1], got $probability")
  require(kind != FaultKind.DeleteStream || stream.isDefined, "a deleteStream fault needs the stream to delete")
  private[simulator] var fired = 0L
  def firedCount: Long = fired

  def matches(op: String, streamName: Option[String]): Boolean =
    (operations.isEmpty || operations.contains(op)) && stream.forall(s => streamName.contains(s)) &&
      maxCount.forall(fired < _)
}

sealed abstract class FaultKind(val name: String)

object FaultKind {
  /** HTTP 500 InternalFailure. */
  case object Http500 extends FaultKind("http500")
  /** HTTP 503 ServiceUnavailable. */
  case object Http503 extends FaultKind("http503")
  /** The answer comes `latencyMillis` late. */
  case object Latency extends FaultKind("latency")
  /** The connection is reset (TCP RST) instead of answered. */
  case object Reset extends FaultKind("reset")
  /** No answer for `hangMillis`, then the connection is closed: the client's timeouts are what end the call. */
  case object Hang extends FaultKind("hang")
  /** Records of a PutRecords fail individually with InternalFailure (all, or those with the given partition keys). */
  case object RecordFailure extends FaultKind("recordFailure")
  /** GetRecords answers ExpiredIteratorException. */
  case object ExpireIterator extends FaultKind("expireIterator")
  /** The rule's stream is deleted before the request is served. */
  case object DeleteStream extends FaultKind("deleteStream")
  /** A SubscribeToShard stream is cut after `afterEvents` events: its connection is reset. */
  case object CutSubscription extends FaultKind("cutSubscription")
  /** A SubscribeToShard stream ends with an `exceptionType` exception event after `afterEvents` events. */
  case object SubscriptionError extends FaultKind("subscriptionError")

  val all: Seq[FaultKind] = Seq(Http500, Http503, Latency, Reset, Hang, RecordFailure, ExpireIterator, DeleteStream,
    CutSubscription, SubscriptionError)

  def named(name: String): FaultKind = all.find(_.name == name).getOrElse(
    throw new IllegalArgumentException(s"unknown fault kind '$name'; known: ${all.map(_.name).mkString(", ")}"))
}

/** What the faults decided for one request: a delay, then at most one action instead of (or before) serving it. */
final case class FaultDecision(latencyMillis: Long, action: Option[FaultRule])

final class Faults(initialSeed: Long) {
  private var seedValue = initialSeed
  private var random = new java.util.Random(initialSeed)
  private var ruleList: Vector[FaultRule] = Vector.empty

  def seed: Long = synchronized(seedValue)
  def rules: Vector[FaultRule] = synchronized(ruleList)

  /** Replaces the rules; the generator restarts from the seed so a run's faults do not depend on earlier ones. */
  def set(rules: Seq[FaultRule], seed: Option[Long]): Unit = synchronized {
    seed.foreach(seedValue = _)
    random = new java.util.Random(seedValue)
    ruleList = rules.toVector
  }

  def clear(): Unit = set(Nil, None)

  private def fires(rule: FaultRule): Boolean = {
    val hit = rule.probability >= 1.0 || (rule.probability > 0 && random.nextDouble() < rule.probability)
    if (hit) rule.fired += 1
    hit
  }

  def decide(op: String, stream: Option[String]): FaultDecision = synchronized {
    var latency = 0L
    var action: Option[FaultRule] = None
    ruleList.foreach { rule =>
      if (rule.kind != FaultKind.RecordFailure && rule.matches(op, stream)) rule.kind match {
        case FaultKind.Latency => if (fires(rule)) latency += rule.latencyMillis
        case FaultKind.ExpireIterator if op != "GetRecords" =>
        case _ => if (action.isEmpty && fires(rule)) action = Some(rule)
      }
    }
    FaultDecision(latency, action)
  }

  /** Whether this record of a PutRecords call fails with InternalFailure. */
  def failRecord(stream: String, partitionKey: String): Boolean = synchronized {
    ruleList.exists { rule =>
      rule.kind == FaultKind.RecordFailure && rule.matches("PutRecords", Some(stream)) &&
        (rule.partitionKeys.isEmpty || rule.partitionKeys.contains(partitionKey)) && fires(rule)
    }
  }
}
