package io.github.sparkkinesis.options

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

/** The Python package's option table (Spark Connect builders) is generated from KinesisOptions: one source of truth. */
class PythonOptionsTableSuite extends AnyFunSuite {
  private val committed = Paths.get("..", PythonOptionsTable.RepoPath)

  test("the Python package's options table is the Scala table") {
    assert(Files.exists(committed), s"${PythonOptionsTable.RepoPath} is missing: run 'make python-options'")
    val actual = new String(Files.readAllBytes(committed), StandardCharsets.UTF_8)
    assert(
      actual == PythonOptionsTable.render,
      s"${PythonOptionsTable.RepoPath} is out of date with KinesisOptions.all: run 'make python-options' and commit it")
  }

  test("each row carries key, default, scope, secret and doc of its option, in the table's order") {
    val rows = new ObjectMapper().readTree(PythonOptionsTable.render).get("options").elements().asScala.toSeq
    assert(rows.map(_.get("key").asText) == KinesisOptions.all.map(_.key))
    for ((row, o) <- rows.zip(KinesisOptions.all)) {
      assert(Option(row.get("default")).filterNot(_.isNull).map(_.asText) == o.default, o.key)
      assert(row.get("secret").asBoolean == o.secret, o.key)
      assert(row.get("doc").asText == o.doc, o.key)
      assert(row.get("scope").asText == o.scope.toString.toLowerCase(java.util.Locale.ROOT), o.key)
    }
    assert(rows.exists(_.get("secret").asBoolean) && rows.exists(_.get("default").isNull))
  }
}
