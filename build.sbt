import Dependencies._

ThisBuild / organization := "io.github.sparkkinesis"
// What Maven Central requires of a POM (docs/dev/releasing.md).
ThisBuild / organizationName := "The spark-kinesis authors"
ThisBuild / description := "Amazon Kinesis Data Streams source and sink for Spark Structured Streaming"
ThisBuild / homepage := Some(url("https://github.com/sparkkinesis/spark-kinesis"))
ThisBuild / licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0.txt"))
ThisBuild / developers := List(
  Developer("sparkkinesis", "The spark-kinesis authors", "", url("https://github.com/sparkkinesis"))
)
ThisBuild / scmInfo := Some(
  ScmInfo(
    url("https://github.com/sparkkinesis/spark-kinesis"),
    "scm:git:https://github.com/sparkkinesis/spark-kinesis.git",
    "scm:git:git@github.com:sparkkinesis/spark-kinesis.git"
  )
)
// `make dist` publishes into dist/maven, a Maven repository layout (`--repositories file://.../dist/maven`).
ThisBuild / publishTo := Some(
  Resolver.file("dist", (ThisBuild / baseDirectory).value / "dist" / "maven")(Resolver.mavenStylePatterns)
)
ThisBuild / publishMavenStyle := true
ThisBuild / scalaVersion := scala213
ThisBuild / javacOptions ++= Seq("--release", "17")
ThisBuild / scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked", "-Xlint:-infer-any")

lazy val repoRoot = settingKey[File]("the repository's top folder, handed to tests that start emulators")
ThisBuild / repoRoot := (ThisBuild / baseDirectory).value

// A bare `sbt test` runs unit tests only; the integration tests need the emulator and run from `make test`.
lazy val root = (project in file("."))
  .aggregate(connector, connectorSpark35)
  .settings(publish / skip := true)

/** The connector for one Spark line, from the shared sources in connector/src plus the line's own folders
  * (`src/main/scala-spark4`, `src/main/scala-spark3.5`, and the same under `src/test`) where Spark's APIs differ. */
def connectorFor(line: String, spark: String): Seq[Setting[_]] = Seq(
  name := "spark-kinesis",
  libraryDependencies ++= sparkProvided(spark) ++ awsSdk ++ jackson ++ protobuf :+ scalatest,
  Compile / unmanagedSourceDirectories += (Compile / sourceDirectory).value / s"scala-spark$line",
  // The connector's own code compiles without a warning: a new one fails the build (fix it, or @nowarn with why).
  Compile / compile / scalacOptions += "-Xfatal-warnings",
  Test / unmanagedSourceDirectories += (Test / sourceDirectory).value / s"scala-spark$line",
  Test / fork := true,
  Test / javaOptions ++= sparkJavaOptions
) ++ ShadedJar.settings ++ ShadedJar.publishAssemblyAsMainArtifact ++ ThirdParty.settings(repoRoot)

/** `spark-kinesis_2.13`: Spark 4.x. */
lazy val connector = (project in file("connector"))
  .settings(connectorFor("4", sparkVersion))

/** `spark-kinesis_2.12`: Spark 3.5, built from the same folder into connector/target/spark3.5. */
lazy val connectorSpark35 = (project in file("connector"))
  .settings(
    scalaVersion := scala212,
    target := baseDirectory.value / "target" / "spark3.5",
    connectorFor("3.5", spark35Version),
    ShadedJar.extraRelocated := Seq("scala.jdk") // src/main/scala-2.12/scala/jdk/CollectionConverters.scala
  )

lazy val integrationTests = (project in file("integration-tests"))
  .settings(
    name := "spark-kinesis-integration-tests",
    publish / skip := true,
    libraryDependencies ++= sparkForTests ++ awsSdkForTests :+ scalatest,
    // Tests run against the shaded jar users load, not the connector's class folders.
    Test / unmanagedJars += Attributed.blank((connector / assembly).value),
    Test / fork := true,
    // Two test JVMs side by side: the suites mostly wait on quotas, triggers and timeouts (the phase used 0.1-0.5 of
    // two cores in one JVM). Suites within a JVM still run one at a time.
    Test / parallelExecution := true,
    Test / testGrouping := {
      val options = (Test / forkOptions).value
      (Test / definedTests).value
        .groupBy(t => if (itFirstJvm(t.name.split('.').last)) "jvm-1" else "jvm-2")
        .toSeq
        .sortBy(_._1)
        .map { case (name, tests) => Tests.Group(name, tests.sortBy(_.name), Tests.SubProcess(options)) }
    },
    Test / javaOptions ++= sparkJavaOptions ++ Seq(
      "-Xmx4g",
      s"-Dsparkkinesis.root=${repoRoot.value}",
      s"-Dsparkkinesis.assembly=${(connector / assembly).value}",
      s"-Dsparkkinesis.coordinates=${organization.value}:${(connector / moduleName).value}_${scalaBinaryVersion.value}:${version.value}",
      s"-Dsparkkinesis.probeJar=${(Test / packageBin).value}"
    ),
    Test / envVars ++= sys.env.filter { case (k, _) => k.startsWith("KINESIS_") || k.startsWith("AWS_") || k == "SPARK_HOME" },
    // `make bench` runs benchmark mains from the test sources (bench/SinkQuotaBench) with the same JVM options.
    Test / run / fork := true
  )
  .settings(simulatorForIntegrationTests)

/** The integration suites of the first test JVM: the ones that start more JVMs (spark-submit, `local-cluster`) and
  * about half the phase's time with them (JUnit reports, 2026-11-29); every other suite runs in the second. */
lazy val itFirstJvm = Set(
  "FaultMatrixSuite", "SourceClusterSuite", "SparkSubmitPackagesSuite", "MigrationJobsSuite", "SecretsSuite",
  "SourceEngineSuite", "SourceRunEndSuite", "SourceQuotaAndFaultSuite", "SinkQuotaSuite", "SourceRetentionSuite"
)
// sbt's defaults, but two forked test groups at once (its default is one).
Global / concurrentRestrictions := Seq(
  Tags.limitAll(math.max(2, java.lang.Runtime.getRuntime.availableProcessors)),
  Tags.limit(Tags.ForkedTestGroup, 2),
  Tags.exclusiveGroup(Tags.Clean)
)

// --- Kinesis simulator: a standalone server for tests and benchmarks, never part of the connector jar ----------
lazy val simulator = (project in file("localstack/simulator"))
  .settings(
    name := "kinesis-simulator",
    publish / skip := true,
    libraryDependencies ++= simulatorDeps ++ awsSdkForTests :+ scalatest,
    assembly / assemblyJarName := "kinesis-simulator.jar",
    assembly / mainClass := Some("io.github.sparkkinesis.simulator.Main"),
    assembly / test := {},
    assembly / assemblyMergeStrategy := {
      case PathList(ps @ _*) if ps.last == "module-info.class" => MergeStrategy.discard
      case PathList("META-INF", "io.netty.versions.properties") => MergeStrategy.first
      case x => MergeStrategy.defaultMergeStrategy(x)
    },
    Test / unmanagedSourceDirectories += baseDirectory.value / "src" / "admin-client" / "scala",
    Test / fork := true,
    Test / javaOptions ++= Seq("-Xmx2g"),
    // `make bench-simulator` runs the benchmark main from the test sources with this heap.
    Test / run / fork := true
  )

// The integration tests start the simulator from the jar the same sbt run builds, and share its admin client.
lazy val simulatorForIntegrationTests: Seq[Setting[_]] = Seq(
  Test / javaOptions += s"-Dsparkkinesis.simulatorJar=${(simulator / assembly).value}",
  Test / unmanagedSourceDirectories += (simulator / baseDirectory).value / "src" / "admin-client" / "scala"
)
// --- end of Kinesis simulator ----------------------------------------------------------------------------------
