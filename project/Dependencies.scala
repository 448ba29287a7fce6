import sbt._

/** The one place that holds versions. The Python side pins PySpark in python/requirements-dev.txt (4.x) and
  * python/requirements-spark35.txt (3.5). */
object Dependencies {
  val scala213 = "2.13.18"
  /** The Scala 2.12 release Spark 3.5 builds with (spark-parent_2.12's scala.version). */
  val scala212 = "2.12.18"

  /** Compile and JVM-test against the newest Spark 4.x on Maven Central here; PySpark tests run the newest on PyPI. */
  val sparkVersion = "4.2.0"
  /** The second jar, `spark-kinesis_2.12`: the newest Spark 3.5 on Maven Central; `make test` runs PySpark 3.5. */
  val spark35Version = "3.5.9"
  val awsSdkVersion = "2.52.0"
  val jacksonVersion = "2.21.2"
  val scalatestVersion = "3.2.19"
  /** Only its wire-format reader, for KPL aggregates; the same version Spark 4.2 builds with. */
  val protobufVersion = "4.33.5"

  /** Private package the assembly relocates third-party classes into. */
  val shadedPrefix = "io.github.sparkkinesis.shaded"

  /** Spark as the cluster provides it, for the line (Scala version) being built. */
  def sparkProvided(version: String): Seq[ModuleID] = Seq(
    "org.apache.spark" %% "spark-sql" % version % Provided
  )

  private val excludedFromSdk = Seq(
    // Spark ships slf4j and commons-logging (jcl-over-slf4j); bundling them would split logging.
    ExclusionRule("org.slf4j"),
    ExclusionRule("commons-logging", "commons-logging"),
    // The SDK pulls both Apache clients; the connector uses HttpClient 5 (apache5-client) and ships only that.
    ExclusionRule("software.amazon.awssdk", "apache-client")
  )

  val awsSdk: Seq[ModuleID] = Seq(
    "software.amazon.awssdk" % "kinesis" % awsSdkVersion,
    "software.amazon.awssdk" % "sts" % awsSdkVersion,
    "software.amazon.awssdk" % "apache5-client" % awsSdkVersion,
    "software.amazon.awssdk" % "netty-nio-client" % awsSdkVersion
  ).map(_.excludeAll(excludedFromSdk: _*))

  val jackson: Seq[ModuleID] = Seq(
    "com.fasterxml.jackson.core" % "jackson-databind" % jacksonVersion
  )

  val protobuf: Seq[ModuleID] = Seq(
    "com.google.protobuf" % "protobuf-java" % protobufVersion
  )

  val scalatest: ModuleID = "org.scalatest" %% "scalatest" % scalatestVersion % Test

  /** Spark's test classpath (the integration tests run Spark in-process). */
  val sparkForTests: Seq[ModuleID] = Seq(
    "org.apache.spark" %% "spark-sql" % sparkVersion % Test
  )

  /** An independent, unshaded SDK for test fixtures: ground truth comes from outside the jar under test. */
  val awsSdkForTests: Seq[ModuleID] = Seq(
    "software.amazon.awssdk" % "kinesis" % awsSdkVersion % Test,
    "software.amazon.awssdk" % "apache5-client" % awsSdkVersion % Test
  )

  /** JVM flags Spark needs on Java 17 (mirrors Spark's own launcher). */
  val sparkJavaOptions: Seq[String] = Seq(
    "-XX:+IgnoreUnrecognizedVMOptions",
    "-Djdk.reflect.useDirectMethodHandle=false",
    "-Dio.netty.tryReflectionSetAccessible=true"
  ) ++ Seq(
    "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
    "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
    "sun.security.action", "sun.util.calendar"
  ).map(pkg => s"--add-opens=java.base/$pkg=ALL-UNNAMED")

  // --- Kinesis simulator (localstack/simulator): a standalone test server, never part of the connector jar ----
  /** The Netty line the AWS SDK itself pulls, so the simulator's tests see one Netty on their classpath. */
  val nettyVersion = "4.1.137.Final"

  val simulatorDeps: Seq[ModuleID] = Seq(
    "com.fasterxml.jackson.core" % "jackson-databind" % jacksonVersion,
    "com.fasterxml.jackson.dataformat" % "jackson-dataformat-cbor" % jacksonVersion,
    "io.netty" % "netty-codec-http" % nettyVersion,
    "io.netty" % "netty-codec-http2" % nettyVersion
  )
  // --- end of Kinesis simulator ------------------------------------------------------------------------------
}
