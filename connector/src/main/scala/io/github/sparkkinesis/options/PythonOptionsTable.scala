package io.github.sparkkinesis.options

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import com.fasterxml.jackson.databind.ObjectMapper

/**
 * [[KinesisOptions.all]] as the JSON table the Python package ships (`python/pyspark_kinesis/_options.json`): on a
 * Spark Connect session the Python builders compute their options from it, without a JVM. One option per line, so
 * a change to the table reads as a one-line diff. `make python-options` writes it from the assembly jar;
 * `PythonOptionsTableSuite` fails when the committed file differs from [[render]].
 *
 * Usage: `java -cp <assembly jar>:<scala-library jar> io.github.sparkkinesis.options.PythonOptionsTable <file | ->`
 */
object PythonOptionsTable {
  /** Where the table lives, relative to the repository's top folder. */
  val RepoPath = "python/pyspark_kinesis/_options.json"

  private val mapper = new ObjectMapper()

  private def scope(o: KinesisOption): String = o.scope match {
    case OptionScope.Source => "source"
    case OptionScope.Sink => "sink"
    case OptionScope.Both => "both"
  }

  private def row(o: KinesisOption): String = {
    val node = mapper.createObjectNode()
    node.put("key", o.key)
    o.default.fold(node.putNull("default"))(node.put("default", _))
    node.put("scope", scope(o))
    node.put("secret", o.secret)
    node.put("doc", o.doc)
    mapper.writeValueAsString(node)
  }

  /** The table's text, ending with a newline. */
  def render: String =
    KinesisOptions.all.map(row).mkString(
      "{\n  \"generatedFrom\": \"io.github.sparkkinesis.options.KinesisOptions.all\",\n  \"options\": [\n    ",
      ",\n    ",
      "\n  ]\n}\n")

  def main(args: Array[String]): Unit = args match {
    case Array("-") => print(render)
    case Array(path) => Files.write(Paths.get(path), render.getBytes(StandardCharsets.UTF_8))
    case _ =>
      System.err.println(s"usage: PythonOptionsTable <file to write, or - for standard output>")
      sys.exit(2)
  }
}
