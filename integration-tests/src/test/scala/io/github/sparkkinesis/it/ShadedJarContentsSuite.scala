package io.github.sparkkinesis.it

import java.util.zip.ZipFile

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** The assembly must never put a second copy of a library Spark ships on the user's classpath. */
class ShadedJarContentsSuite extends AnyFunSuite {
  private lazy val entries: Seq[String] = {
    val zip = new ZipFile(TestEnv.assemblyJar)
    try zip.entries().asScala.map(_.getName).toSeq finally zip.close()
  }
  private def classes = entries.filter(_.endsWith(".class"))

  private val relocated = Seq("software/amazon/", "io/netty/", "com/fasterxml/", "org/reactivestreams/", "org/apache/hc/",
    "com/google/protobuf/")

  test("no class of a relocated library is left at its original package") {
    val leaked = classes.filter(c => relocated.exists(c.startsWith))
    assert(leaked.isEmpty, s"${leaked.size} unrelocated classes, e.g. ${leaked.take(5).mkString(", ")}")
  }

  test("the relocated libraries are present under the private package") {
    for (pkg <- relocated) {
      val prefix = s"io/github/sparkkinesis/shaded/$pkg"
      assert(classes.exists(_.startsWith(prefix)), s"nothing under $prefix")
    }
  }

  test("only the connector's own packages sit outside the shaded one") {
    // org/apache/spark/sparkkinesis: the one shim that reaches Spark's private RPC (DriverChannel).
    val foreign = classes.filterNot(c => c.startsWith("io/github/sparkkinesis/") || c.startsWith("org/apache/spark/sparkkinesis/"))
    assert(foreign.isEmpty, s"classes outside io/github/sparkkinesis: ${foreign.take(10).mkString(", ")}")
    assert(!entries.exists(_.startsWith("scala/")), "the Scala library must come from Spark, not the jar")
    assert(!entries.exists(_.startsWith("org/slf4j/")), "slf4j must come from Spark, not the jar")
  }

  test("the data source is registered under its short names, kinesis and aws-kinesis") {
    val zip = new ZipFile(TestEnv.assemblyJar)
    val registered = try {
      val entry = zip.getEntry("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister")
      assert(entry != null, "no DataSourceRegister service file")
      scala.io.Source.fromInputStream(zip.getInputStream(entry), "UTF-8").getLines().map(_.trim).filter(_.nonEmpty).toList
    } finally zip.close()
    assert(registered == List("io.github.sparkkinesis.KinesisProvider", "io.github.sparkkinesis.AwsKinesisProvider"))
  }
}
