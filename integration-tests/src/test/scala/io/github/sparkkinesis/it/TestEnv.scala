package io.github.sparkkinesis.it

import java.io.File

/** What the build hands the integration tests (see build.sbt), with a clear failure when run another way. */
object TestEnv {
  private def prop(name: String): String =
    sys.props.getOrElse(s"sparkkinesis.$name",
      throw new IllegalStateException(s"system property sparkkinesis.$name is not set: run the integration " +
        "tests through sbt (make test), which sets it"))

  lazy val repoRoot: File = new File(prop("root"))
  lazy val assemblyJar: File = new File(prop("assembly"))
  lazy val coordinates: String = prop("coordinates")
  lazy val probeJar: File = new File(prop("probeJar"))

  /** Region and credentials for the endpoint under test; an emulator accepts any. */
  lazy val region: String = sys.env.getOrElse("AWS_REGION", "us-east-1")
  lazy val accessKey: String = sys.env.getOrElse("AWS_ACCESS_KEY_ID", "test-access-key")
  lazy val secretKey: String = sys.env.getOrElse("AWS_SECRET_ACCESS_KEY", "test-secret-key")

  /** The Spark whose spark-submit the packaging tests run: `make test` points SPARK_HOME at PySpark's. */
  lazy val sparkHome: File = {
    val home = new File(sys.env.getOrElse("SPARK_HOME",
      throw new IllegalStateException("SPARK_HOME is not set: run 'make test' (it points SPARK_HOME at the " +
        "PySpark it installs into .venv) or set it to a Spark 4 installation")))
    require(new File(home, "bin/spark-submit").canExecute, s"no bin/spark-submit under SPARK_HOME=$home")
    home
  }

  lazy val sparkSubmit: File = new File(sparkHome, "bin/spark-submit")
}
