package io.github.sparkkinesis.options

import java.util.regex.Pattern

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf

/**
 * Spark prints a data source's options wherever it shows a plan (`explain`, the SQL tab, the event log), masking
 * only keys that match its redaction patterns: by default secret, password, token, access key and url. Some of our
 * secret options (`roleExternalId`) match none of them, so before a plan with our options exists, the session's
 * `spark.sql.redaction.options.regex` is widened to cover every secret key of the table. Only ever widened.
 */
object SparkRedaction extends Logging {
  val OptionsRegexKey = "spark.sql.redaction.options.regex"
  private val SparkDefaults =
    Map(OptionsRegexKey -> "(?i)url", "spark.redaction.regex" -> "(?i)secret|password|token|access[.]?key")

  private def secretKeys: Seq[String] =
    KinesisOptions.all.filter(_.secret).map(_.key) ++ ForeignOptions.all.filter(_.secret).map(_.key).sorted

  /** The options pattern covering `missing` as well as everything `current` covers. */
  private[options] def widened(current: String, missing: Seq[String]): String =
    s"(?:$current)|(?i)(?:${missing.map(Pattern.quote).mkString("|")})"

  /** Secret keys neither of Spark's patterns masks, given the session's settings. */
  private[options] def unmasked(conf: String => String): Seq[String] = {
    val patterns = SparkDefaults.keys.toSeq.map(k => Pattern.compile(conf(k)))
    secretKeys.filterNot(key => patterns.exists(_.matcher(key).find()))
  }

  private def session: Option[SparkSession] = SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession)

  def ensure(): Unit = session.foreach { session =>
    try {
      val missing = unmasked(k => session.conf.get(k, SparkDefaults(k)))
      if (missing.nonEmpty) {
        val current = session.conf.get(OptionsRegexKey, SparkDefaults(OptionsRegexKey))
        session.conf.set(OptionsRegexKey, widened(current, missing))
        logInfo(s"$OptionsRegexKey widened to mask the Kinesis options ${missing.mkString(", ")} in plans and logs")
      }
    } catch {
      // A conf this session will not change (e.g. a restricted Spark Connect server): then keys stay as Spark masks them.
      case NonFatal(e) => logWarning(s"Could not widen $OptionsRegexKey to mask ${secretKeys.mkString(", ")}: $e")
    }
  }

  val StringRegexKey = "spark.sql.redaction.string.regex"

  /**
   * A secret parameter of our SQL functions: `awsSecretKey => 'value'` as SQL text has it, `awsSecretKey => value`
   * as the parsed plan of `EXPLAIN EXTENDED` prints it: up to the next blank, `)` or `]`, which secret values never
   * hold, but for the comma that separates parameters.
   */
  private[options] lazy val sqlArgumentsRegex: String =
    s"""(?i)\\b(?:${secretKeys.map(Pattern.quote).mkString("|")})\\s*=>\\s*(?:'[^']*'|"[^"]*"|[^\\s)\\]]*[^\\s)\\],])"""

  /**
   * The options of `read_kinesis(...)` are in the SQL text, which no options pattern covers: Spark prints it in
   * `EXPLAIN EXTENDED` and the SQL tab, masking what `spark.sql.redaction.string.regex` matches. So that pattern is
   * widened to match our secret parameters, before the plan of the first such call is printed. Only ever widened.
   */
  def ensureSqlArguments(): Unit = session.foreach { session =>
    try {
      val current = SQLConf.get.stringRedactionPattern.map(_.regex)
      if (!current.exists(_.contains(sqlArgumentsRegex))) {
        session.conf.set(StringRegexKey, current.fold(sqlArgumentsRegex)(c => s"(?:$c)|$sqlArgumentsRegex"))
        logInfo(s"$StringRegexKey widened to mask the secret parameters of the Kinesis SQL functions")
      }
    } catch {
      case NonFatal(e) =>
        logWarning(s"Could not widen $StringRegexKey to mask ${secretKeys.mkString(", ")} in SQL text: $e")
    }
  }
}
