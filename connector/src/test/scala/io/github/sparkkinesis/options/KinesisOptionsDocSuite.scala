package io.github.sparkkinesis.options

import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

/**
 * The docs' option tables are the option tables (docs/configuration.md: every option; docs/migrating.md: the options of
 * Databricks', the AWS Labs and Qubole's connectors): this fails, printing the expected text, when they drift.
 */
class KinesisOptionsDocSuite extends AnyFunSuite {
  private val Begin = "<!-- options:begin (generated from KinesisOptions; KinesisOptionsDocSuite checks it) -->"
  private val End = "<!-- options:end -->"

  private def scope(o: KinesisOption) = o.scope match {
    case OptionScope.Source => "source"
    case OptionScope.Sink => "sink"
    case OptionScope.Both => "both"
  }

  private val expected: String = (Seq("| option | default | applies to | meaning |", "|---|---|---|---|") ++
    KinesisOptions.all.map { o =>
      s"| `${o.key}` | ${o.default.getOrElse("—")} | ${scope(o)} | ${o.doc}${if (o.secret) " (secret: never logged)"
        else ""} |"
    }).mkString("\n")

  private val Configuration = "docs/configuration.md"
  private val Migrating = "docs/migrating.md"

  private def section(page: String, begin: String, end: String): String = {
    val text = new String(Files.readAllBytes(Paths.get("..", page)), "UTF-8")
    val start = text.indexOf(begin)
    val stop = text.indexOf(end)
    assert(start >= 0 && stop > start, s"$page has no section between\n$begin\n$end")
    text.substring(start + begin.length, stop).trim
  }

  test("the configuration page lists every option with its default and meaning") {
    val actual = section(Configuration, Begin, End)
    assert(actual == expected, s"$Configuration's option table is out of date; it should read:\n$Begin\n$expected\n$End")
  }

  private val DatabricksBegin =
    "<!-- databricks:begin (generated from DatabricksOptions; KinesisOptionsDocSuite checks it) -->"
  private val DatabricksEnd = "<!-- databricks:end -->"

  private val expectedDatabricks: String = (Seq("| Databricks option | here | what it does here |", "|---|---|---|") ++
    DatabricksOptions.all.map(e => s"| `${e.key}` | ${e.handling.label} | ${e.here} |")).mkString("\n")

  test("the migration page says what each option of Databricks' connector does here") {
    val actual = section(Migrating, DatabricksBegin, DatabricksEnd)
    assert(
      actual == expectedDatabricks,
      s"$Migrating's Databricks table is out of date; it should read:\n$DatabricksBegin\n$expectedDatabricks\n$DatabricksEnd")
  }

  for (table <- Seq(AwsLabsOptions, QuboleOptions)) {
    val tag = table.short.toLowerCase.replace(" ", "")
    val begin =
      s"<!-- $tag:begin (generated from ${table.getClass.getSimpleName.stripSuffix("$")}; KinesisOptionsDocSuite checks it) -->"
    val end = s"<!-- $tag:end -->"
    val expected = (Seq(s"| ${table.short} option | here | what it does here |", "|---|---|---|") ++
      table.all.map(e =>
        s"| `${e.key}` | ${e.handling.label} | ${e.here}${if (e.secret) " (secret: never logged)" else ""} |")).mkString(
      "\n")

    test(s"the migration page says what each option of the ${table.short} connector does here") {
      val actual = section(Migrating, begin, end)
      assert(
        actual == expected,
        s"$Migrating's ${table.short} table is out of date; it should read:\n$begin\n$expected\n$end")
    }
  }
}
