import Dependencies._

ThisBuild / organization := "io.github.sparkkinesis"
ThisBuild / scalaVersion := scala213
ThisBuild / javacOptions ++= Seq("--release", "17")
ThisBuild / scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked", "-Xlint:-infer-any")

lazy val repoRoot = settingKey[File]("the repository's top folder, handed to tests that start emulators")
ThisBuild / repoRoot := (ThisBuild / baseDirectory).value

// A bare `sbt test` runs unit tests only; the integration tests need the emulator and run from `make test`.
lazy val root = (project in file("."))
  .aggregate(connector)
  .settings(publish / skip := true)

lazy val connector = (project in file("connector"))
  .settings(
    name := "spark-kinesis",
    libraryDependencies ++= sparkProvided ++ awsSdk ++ jackson ++ protobuf :+ scalatest,
    Test / fork := true,
    Test / javaOptions ++= sparkJavaOptions,
    ShadedJar.settings,
    ShadedJar.publishAssemblyAsMainArtifact
  )

lazy val integrationTests = (project in file("integration-tests"))
  .settings(
    name := "spark-kinesis-integration-tests",
    publish / skip := true,
    libraryDependencies ++= sparkForTests ++ awsSdkForTests :+ scalatest,
    // Tests run against the shaded jar users load, not the connector's class folders.
    Test / unmanagedJars += Attributed.blank((connector / assembly).value),
    Test / fork := true,
    Test / parallelExecution := false,
    Test / javaOptions ++= sparkJavaOptions ++ Seq(
      "-Xmx4g",
      s"-Dsparkkinesis.root=${repoRoot.value}",
      s"-Dsparkkinesis.assembly=${(connector / assembly).value}",
      s"-Dsparkkinesis.coordinates=${organization.value}:${(connector / moduleName).value}_${scalaBinaryVersion.value}:${version.value}",
      s"-Dsparkkinesis.probeJar=${(Test / packageBin).value}"
    ),
    Test / envVars ++= sys.env.filter { case (k, _) => k.startsWith("KINESIS_") || k.startsWith("AWS_") || k == "SPARK_HOME" }
  )
