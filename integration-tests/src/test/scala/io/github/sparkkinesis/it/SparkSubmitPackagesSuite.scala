package io.github.sparkkinesis.it

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * `spark-submit --packages io.github.sparkkinesis:spark-kinesis_2.13:<v>` resolves the artifact that
 * `make publish-local` put in the local Maven repository, with no remote repository at all, and its classes load
 * on the driver and inside a separate executor JVM. Runs PySpark's own spark-submit (the newest Spark on PyPI).
 */
class SparkSubmitPackagesSuite extends AnyFunSuite {
  private val localMaven = new File(sys.props("user.home"), ".m2/repository")

  test("--packages resolves the published artifact offline and loads it on the driver and an executor") {
    val Array(group, artifact, version) = TestEnv.coordinates.split(':')
    val pom = new File(localMaven, s"${group.replace('.', '/')}/$artifact/$version/$artifact-$version.pom")
    assert(pom.isFile, s"$pom is missing: 'make publish-local' (sbt connector/publishM2) publishes it")
    assert(!Files.readString(pom.toPath).contains("<dependency>"),
      "the published pom must declare no dependencies: the jar is self-contained")

    val work = TempDirs.create("spark-submit-packages-")
    // Only the local Maven repository: resolution cannot reach the network, and a fresh Ivy cache per run means
    // a re-published snapshot is never served stale.
    val ivySettings = work.resolve("ivysettings.xml")
    Files.writeString(ivySettings,
      s"""<ivysettings>
         |  <settings defaultResolver="local-maven"/>
         |  <resolvers>
         |    <ibiblio name="local-maven" m2compatible="true" root="${localMaven.toURI}"/>
         |  </resolvers>
         |</ivysettings>
         |""".stripMargin)

    val command = Seq(
      TestEnv.sparkSubmit.getPath,
      "--master", "local-cluster[1,1,1024]",
      "--packages", TestEnv.coordinates,
      "--conf", s"spark.jars.ivySettings=$ivySettings",
      "--conf", s"spark.jars.ivy=${work.resolve("ivy")}",
      "--conf", "spark.ui.enabled=false",
      "--class", "io.github.sparkkinesis.it.PackagesProbe",
      TestEnv.probeJar.getPath)
    val log = work.resolve("spark-submit.log")
    val process = new ProcessBuilder(command.asJava).redirectErrorStream(true).redirectOutput(log.toFile).start()
    val finished = process.waitFor(5, TimeUnit.MINUTES)
    if (!finished) process.destroyForcibly()
    val output = Files.readAllLines(log, UTF_8).asScala.toSeq
    def context = s"\n--- spark-submit output (${log}) ---\n${output.takeRight(60).mkString("\n")}"
    assert(finished, s"spark-submit did not finish within 5 minutes$context")
    assert(process.exitValue() == 0, s"spark-submit exited with ${process.exitValue()}$context")

    val jarName = s"${group}_$artifact-$version.jar" // how Ivy names a retrieved artifact
    val probes = output.filter(_.startsWith("PROBE "))
    val driver = probes.find(_.startsWith("PROBE driver")).getOrElse(fail(s"no driver report$context"))
    val executors = probes.filter(_.startsWith("PROBE executor"))
    assert(executors.nonEmpty, s"no executor report$context")

    assert(field(driver, "provider").endsWith(jarName), driver)
    assert(field(driver, "shortName") == "io.github.sparkkinesis.KinesisProvider", driver)
    for (executor <- executors) {
      assert(field(executor, "id") != "driver", executor)
      assert(field(executor, "pid") != field(driver, "pid"), s"executor ran in the driver JVM: $executor")
      assert(field(executor, "provider").endsWith(jarName), executor)
      assert(field(executor, "client").endsWith(jarName), executor)
    }
  }

  private def field(line: String, name: String): String =
    line.split(' ').collectFirst { case kv if kv.startsWith(s"$name=") => kv.drop(name.length + 1) }
      .getOrElse(fail(s"no $name= in '$line'"))
}
