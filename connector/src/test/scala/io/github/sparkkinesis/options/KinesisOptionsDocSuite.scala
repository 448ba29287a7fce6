package io.github.sparkkinesis.options

import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

/** The README's option table is the option table: this fails, printing the expected text, when they drift. */
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
      s"| `${o.key}` | ${o.default.getOrElse("—")} | ${scope(o)} | ${o.doc}${if (o.secret) " (secret: never logged)" else ""} |"
    }).mkString("\n")

  test("the README lists every option with its default and meaning") {
    val readme = new String(Files.readAllBytes(Paths.get("..", "README.md")), "UTF-8")
    val start = readme.indexOf(Begin)
    val end = readme.indexOf(End)
    assert(start >= 0 && end > start, s"README.md has no section between\n$Begin\n$End")
    val actual = readme.substring(start + Begin.length, end).trim
    assert(actual == expected, s"README.md's option table is out of date; it should read:\n$Begin\n$expected\n$End")
  }
}
