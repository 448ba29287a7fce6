package io.github.sparkkinesis.options

import io.github.sparkkinesis.sink.SinkConfig
import io.github.sparkkinesis.source.SourceConfig
import java.util.regex.Pattern

import scala.jdk.CollectionConverters._

import io.github.sparkkinesis.{KinesisSinks, KinesisSources}
import io.github.sparkkinesis.client.CredentialsConfig
import org.scalatest.funsuite.AnyFunSuite

/** Every secret option of the table, set to a marker: `options()` keeps it, every printed form hides it. */
class SecretPrintingSuite extends AnyFunSuite {
  private val secrets = KinesisOptions.all.filter(_.secret)
  private def marker(o: KinesisOption) = s"marker-${o.key}-51f0"
  /** The options a secret needs beside it: a role for its external id, a proxy for its password. */
  private val withRole = Map(
    "roleArn" -> "arn:aws:iam::123456789012:role/r",
    "proxyHost" -> "proxy.example.com",
    "proxyPort" -> "3128",
    "proxyUsername" -> "u")

  test("the builders' options() keep each secret; toString masks it") {
    val source = secrets.foldLeft(KinesisSources.kinesis("s"))((b, o) => b.withOption(o.key, marker(o)))
    val sink = secrets.foldLeft(KinesisSinks.kinesis("s"))((b, o) => b.withOption(o.key, marker(o)))
    for (builder <- Seq(source, sink); o <- secrets) {
      assert(builder.options().get(o.key) == marker(o), "options() is what build applies")
      assert(!builder.toString.contains(marker(o)), s"${o.key} shows in ${builder.toString}")
    }
  }

  test("the parsed configs print no secret: option reader, connection, source and sink config") {
    val raw = secrets.map(o => o.key -> marker(o)).toMap ++ withRole + ("streamName" -> "s")
    val reader = OptionReader(raw)
    val printed = Seq(
      reader.toString,
      reader.connection.toString,
      SourceConfig(reader).toString,
      SinkConfig(reader).toString,
      CredentialsConfig.Static("AKIDmarker-1", "marker-2", Some("marker-3")).toString
    )
    for (text <- printed; o <- secrets) assert(!text.contains(marker(o)), s"${o.key} shows in $text")
    assert(!printed.last.contains("marker-"), printed.last)
  }

  test("Spark's option redaction is widened to the secret keys its defaults miss, and never narrowed") {
    val defaults = Map(
      SparkRedaction.OptionsRegexKey -> "(?i)url",
      "spark.redaction.regex" -> "(?i)secret|password|token|access[.]?key")
    // The AWS Labs connector's credentialProviderParam may carry a secret too (its key is refused, its value masked).
    val missed = Seq("roleExternalId", "kinesis.credentialProviderParam")
    assert(SparkRedaction.unmasked(defaults) == missed)
    val widened = SparkRedaction.widened("(?i)url", missed)
    for (key <- Seq("roleexternalid", "roleExternalId", "endpointUrl", "KINESIS.credentialproviderparam"))
      assert(Pattern.compile(widened).matcher(key).find(), key)
    assert(!Pattern.compile(widened).matcher("streamName").find())
    assert(SparkRedaction.unmasked(defaults.updated(SparkRedaction.OptionsRegexKey, widened)).isEmpty)
  }

  test("the SQL text pattern masks each secret parameter as SQL text and a parsed plan print it, and nothing else") {
    val pattern = Pattern.compile(SparkRedaction.sqlArgumentsRegex)
    def masked(text: String) = pattern.matcher(text).replaceAll("XX")
    for (o <- secrets) {
      val m = marker(o)
      assert(masked(s"read_kinesis(streamName => 's', ${o.key} => '$m')") == "read_kinesis(streamName => 's', XX)")
      assert(masked(s"""kinesis_shards(${o.key.toUpperCase}=>"$m")""") == "kinesis_shards(XX)")
      assert(masked(s"[${o.key} => $m, region => eu-west-1]") == "[XX, region => eu-west-1]")
      assert(masked(s"[region => eu-west-1, ${o.key} => a,b=c@d]") == "[region => eu-west-1, XX]")
    }
    assert(masked(
      "[streamName => s, roleArn => arn:aws:iam::1:role/r]") == "[streamName => s, roleArn => arn:aws:iam::1:role/r]")
  }
}
