package io.github.sparkkinesis.options

import java.util.Locale

import scala.collection.mutable

import org.apache.spark.network.util.JavaUtils

/**
 * One option key of another connector (the AWS Labs `aws-kinesis` connector, Qubole's `kinesis-sql`) and what it
 * becomes here.
 *
 * @param key  as that connector documents it; matched case-insensitively, as Spark matches options
 * @param here what it does here: the docs' text, and for a refusal the message's fix
 * @param target for a mapped key, the option of ours it stands for (named in messages about its value)
 * @param read the options of ours its value becomes (Mapped); for NoEffect it checks the value and returns none; for
 *             Refused it throws. Honoured keys are ours (or Databricks') and read by their own rows, never by this.
 */
final case class ForeignKey(
    key: String,
    handling: Handling,
    here: String,
    target: Option[KinesisOption] = None,
    secret: Boolean = false)(val read: ForeignValue => Seq[(KinesisOption, String)]) {
  def lowerKey: String = key.toLowerCase(Locale.ROOT)
}

/**
 * The value of a foreign key as a job gave it, with the job's other options (lower-cased keys) for the few
 * translations that depend on another key, and whether a sink reads it (the few keys that meant something else to
 * that connector's sink). Every failure names the key as the job wrote it, and the option of ours it stands for.
 */
final case class ForeignValue(
    key: String,
    value: String,
    ours: Option[KinesisOption],
    job: Map[String, String],
    sink: Boolean = false) {
  private def shown: String = if (ForeignOptions.isSecret(key)) "***" else value

  def fail(accepted: String): Nothing = {
    val expected = ours.fold(accepted)(o => s"$accepted (it stands for ${o.key} here)")
    throw new KinesisOptionException(s"Invalid value '$shown' for option '$key': expected $expected.")
  }

  def other(key: String): Option[String] = job.get(key.toLowerCase(Locale.ROOT)).map(_.trim).filter(_.nonEmpty)

  def long(min: Long, max: Long = Long.MaxValue): Long = {
    val n =
      try value.toLong
      catch { case _: NumberFormatException => fail(range(min, max)) }
    if (n < min || n > max) fail(range(min, max))
    n
  }

  private def range(min: Long, max: Long) =
    if (max == Long.MaxValue) s"an integer >= $min" else s"an integer in $min..$max"

  def boolean: Boolean = value.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case _ => fail("true or false")
  }

  /** Spark's duration syntax (`1s`, `500ms`); a bare number is milliseconds. */
  def millis(min: Long): Long = {
    val accepted = s"a duration such as 500ms or 1s, at least ${min}ms"
    val ms =
      try JavaUtils.timeStringAsMs(value)
      catch { case _: NumberFormatException => fail(accepted) }
    if (ms < min) fail(accepted)
    ms
  }

  def oneOf(accepted: String*): String =
    accepted.find(_.equalsIgnoreCase(value)).getOrElse(fail(accepted.mkString(" or ")))
}

/**
 * Translates the keys of the other connectors' tables ([[AwsLabsOptions]], [[QuboleOptions]]) into ours before any
 * option is read: a job written for them runs with the meaning it had there, or fails before its query starts
 * naming the key. Keys prefixed `kinesis.` that no table knows fail too: they belong to one of those connectors
 * (a version we do not know, or a typo), and ignoring them would silently change what the job does.
 */
object ForeignOptions {
  /** Both tables, keyed by lower-cased key; honoured keys are read by their own rows, so they are not here. */
  private lazy val byLowerKey: Map[String, (String, ForeignKey)] =
    (AwsLabsOptions.all.map(AwsLabsOptions.short -> _) ++ QuboleOptions.all.map(QuboleOptions.short -> _))
      .filter(_._2.handling != Handling.Honoured)
      .map { case (connector, k) => k.lowerKey -> (connector, k) }.toMap

  def find(key: String): Option[ForeignKey] = byLowerKey.get(key.toLowerCase(Locale.ROOT)).map(_._2)

  def all: Seq[ForeignKey] = byLowerKey.values.map(_._2).toSeq

  def isSecret(key: String): Boolean = find(key).exists(_.secret)

  /** The prefix of the AWS Labs and Qubole connectors' keys, which no key of ours has. */
  val ForeignPrefix = "kinesis."

  /**
   * @param values every option by lower-cased key: the job's own keys, plus ours that foreign keys stand for
   * @param origin for each option of ours set through a foreign key, that key as the job wrote it
   */
  final case class Translated(values: Map[String, String], origin: Map[String, String])

  /** @param sink the options are a sink's (else a source's, or `kinesis_shards`') */
  def translate(raw: Map[String, String], sink: Boolean = false): Translated = {
    val job = raw.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    val produced = mutable.LinkedHashMap.empty[String, (String, String)] // our lower key -> (value, foreign key)
    for ((key, value) <- raw.toSeq.sortBy(_._1); entry <- find(key)) {
      for ((option, v) <- entry.read(ForeignValue(key, value.trim, entry.target, job, sink))) {
        job.get(option.lowerKey).map(_.trim).filter(_.nonEmpty).foreach { given =>
          if (!given.equalsIgnoreCase(v)) conflict(option.key, given, key, value)
        }
        produced.get(option.lowerKey).foreach { case (earlier, by) =>
          if (!earlier.equalsIgnoreCase(v)) conflict(by, raw.find(_._1 == by).map(_._2).getOrElse(earlier), key, value)
        }
        produced(option.lowerKey) = (v, key)
      }
    }
    val added = produced.collect { case (k, (v, _)) if !job.get(k).exists(_.trim.nonEmpty) => k -> v }
    Translated(job ++ added, produced.map { case (k, (_, by)) => k -> by }.toMap)
  }

  private def conflict(a: String, aValue: String, b: String, bValue: String): Nothing = {
    def show(k: String, v: String) = if (KinesisOptions.isSecret(k) || isSecret(k)) "***" else v
    throw new KinesisOptionException(s"Options '$a' ('${show(a, aValue)}') and '$b' ('${show(b, bValue)}') say " +
      "different things: keep one.")
  }
}

/** The helpers a connector's table is written with; `name` is how messages name that connector, `short` the docs. */
abstract class ForeignTable(val name: String, val short: String) {
  def all: Seq[ForeignKey]

  /** A key of ours (or of Databricks' table) that this connector has too, with the same meaning. */
  protected def honoured(key: String, here: String = "the same key here"): ForeignKey =
    ForeignKey(key, Handling.Honoured, here)(_ => Nil)

  /** Another name for one option of ours, same values. */
  protected def renamed(key: String, to: KinesisOption, here: String = null, secret: Boolean = false): ForeignKey =
    ForeignKey(key, Handling.Mapped, Option(here).getOrElse(s"`${to.key}`"), Some(to), secret)(v => Seq(to -> v.value))

  protected def mapped(key: String, to: KinesisOption, here: String, secret: Boolean = false)(
      read: ForeignValue => Seq[(KinesisOption, String)]): ForeignKey =
    ForeignKey(key, Handling.Mapped, here, Some(to), secret)(read)

  /** Tunes what does not exist here: `check` refuses the values that connector would have refused. */
  protected def noEffect(key: String, here: String, secret: Boolean = false)(check: ForeignValue => Any): ForeignKey =
    ForeignKey(key, Handling.NoEffect, here, None, secret) { v => check(v); Nil }

  protected def refused(key: String, here: String, secret: Boolean = false): ForeignKey =
    ForeignKey(key, Handling.Refused, here, None, secret) { _ =>
      throw new KinesisOptionException(s"Option '$key' is $name's and not supported here: $here.")
    }

  protected val Offsets = "offsets live in Spark's checkpoint alone, so there is no metadata store to configure"

  /**
   * Their API calls' retry count, which both connectors' code counts as attempts, the first one included (their loop
   * stops when the count reaches it: 0 makes no call at all), as `retryMaxAttempts` does.
   */
  protected def retries(key: String, defaultThere: Int): ForeignKey = mapped(
    key,
    KinesisOptions.RetryMaxAttempts,
    s"`retryMaxAttempts` (at least 1): there too it counts attempts, the first one included (unlimited by default " +
      s"here, $defaultThere there, where the AWS SDK's own retries also run inside each attempt)"
  ) {
    v =>
      Seq(KinesisOptions.RetryMaxAttempts -> v.long(1, Int.MaxValue).toString)
  }

  /** Milliseconds there; 0 (retry at once) becomes our least backoff, 1ms. */
  protected def backoffMs(key: String, to: KinesisOption): ForeignKey =
    mapped(key, to, s"`${to.key}` (milliseconds)")(v => Seq(to -> s"${math.max(1L, v.long(0))}ms"))

  protected def perShardRecords(key: String): ForeignKey = mapped(
    key,
    KinesisOptions.MaxRecordsPerShardPerTrigger,
    "`maxRecordsPerShardPerTrigger` (default none here, 100000 there)")(v =>
    Seq(KinesisOptions.MaxRecordsPerShardPerTrigger -> v.long(1).toString))

  /** How long their KPL holds a record; here, an aggregate's linger, which exists only when aggregating. */
  protected def linger(key: String, aggregationKey: String): ForeignKey = mapped(
    key,
    KinesisOptions.AggregationLingerMs,
    s"`aggregationLingerMs` when aggregating ($aggregationKey, default true there); no effect without aggregation") {
    v =>
      val ms = v.long(1, 60000)
      val aggregating = v.other(aggregationKey).exists(_.equalsIgnoreCase("true")) ||
        v.other(KinesisOptions.Aggregation.key).exists(_.equalsIgnoreCase("kpl"))
      if (aggregating) Seq(KinesisOptions.AggregationLingerMs -> ms.toString) else Nil
  }

  protected def aggregation(key: String): ForeignKey = mapped(
    key,
    KinesisOptions.Aggregation,
    "true: " +
      "`aggregation=kpl`; false: `aggregation=none` (default true there, none here: without the key, records are " +
      "written one per Kinesis record, which every reader reads)"
  )(v =>
    Seq(KinesisOptions.Aggregation -> (if (v.boolean) "kpl" else "none")))

  protected def maxConnections(key: String): ForeignKey = mapped(
    key,
    KinesisOptions.MaxInFlightRequests,
    "`maxInFlightRequests` (1..64; PutRecords requests one writer task keeps in flight)")(v =>
    Seq(KinesisOptions.MaxInFlightRequests -> v.long(1, 64).toString))

  protected def flushWait(key: String): ForeignKey = noEffect(
    key,
    "a task commits once Kinesis acknowledged every " +
      "record it took, however long that takes within the retry policy")(_.long(0))
}
