import sbt._
import sbt.Keys._
import sbtassembly.AssemblyPlugin.autoImport._
import sbtassembly.{CustomMergeStrategy, MergeStrategy, PathList}
import sbtassembly.Assembly.JarEntry

/** The shaded connector jar: everything the AWS SDK pulls is relocated so it never meets Spark's own copies. */
object ShadedJar {
  private val relocated = Seq(
    "software.amazon",
    "io.netty",
    "com.fasterxml.jackson",
    "org.reactivestreams",
    "org.apache.hc",
    "com.google.protobuf"
  )

  /** Packages (slash form) that must not appear unrelocated in the jar; checked by the integration tests. */
  val relocatedPaths: Seq[String] = relocated.map(_.replace('.', '/') + "/")

  /** Packages relocated in addition to the common ones, per Spark line (the 2.12 jar adds `scala.jdk`, its shim). */
  val extraRelocated = settingKey[Seq[String]]("packages relocated only in this jar")

  private lazy val legalFiles = Def.setting {
    val root = (ThisBuild / baseDirectory).value
    Seq(root / "LICENSE" -> "META-INF/LICENSE", root / "NOTICE" -> "META-INF/NOTICE")
  }

  /** The project's own file; the same path in a dependency is dropped. */
  private val projectOnly = CustomMergeStrategy("projectOnly") { candidates =>
    Right(candidates.filter(_.isProjectDependency).take(1).map(d => JarEntry(d.target, d.stream)))
  }

  val settings: Seq[Setting[_]] = Seq(
    extraRelocated := Nil,
    assembly / assemblyJarName := s"${moduleName.value}-assembly_${scalaBinaryVersion.value}-${version.value}.jar",
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    assembly / test := {},
    assembly / assemblyShadeRules := (relocated ++ extraRelocated.value).map { pkg =>
      ShadeRule.rename(s"$pkg.**" -> s"${Dependencies.shadedPrefix}.$pkg.@1").inAll
    },
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", "org.apache.spark.sql.sources.DataSourceRegister") => MergeStrategy.concat
      // Every client is given its HTTP client explicitly, so the SDK's ServiceLoader lookups (broken by
      // relocation) are never used.
      case PathList("META-INF", "services", _*) => MergeStrategy.discard
      // Netty's native transports cannot be relocated by renaming classes; the SDK runs on NIO.
      case PathList("META-INF", "native", _*) => MergeStrategy.discard
      case PathList("META-INF", "native-image", _*) => MergeStrategy.discard
      case PathList("META-INF", "maven", _*) => MergeStrategy.discard
      // The jar is not multi-release, so versioned variants would never load; they would only leak unrelocated.
      case PathList("META-INF", "versions", _*) => MergeStrategy.discard
      case PathList("META-INF", "io.netty.versions.properties") => MergeStrategy.discard
      case PathList(ps @ _*) if ps.last == "module-info.class" => MergeStrategy.discard
      // The jar's LICENSE, NOTICE, THIRD-PARTY.txt and licenses/ are the build's own (ThirdParty): it copies each
      // bundled artifact's legal files under META-INF/licenses/<artifact>/, where they keep their provenance.
      case PathList("META-INF", rest @ _*) if rest.nonEmpty && (rest.head == "licenses" || ThirdParty.isLegalFile(rest.last)) =>
        projectOnly
      case PathList(ps @ _*) if ps.last == "execution.interceptors" => MergeStrategy.concat
      case x => MergeStrategy.defaultMergeStrategy(x)
    }
  )

  /** `publish` and `publishM2` ship the assembly as the main jar, with a pom that declares no dependencies, beside
    * the sources and the Scaladoc (as `-javadoc.jar`, which Maven Central requires), each with LICENSE and NOTICE. */
  val publishAssemblyAsMainArtifact: Seq[Setting[_]] = Seq(
    Compile / packageBin := assembly.value,
    // The generated META-INF (ThirdParty: what the assembly bundles) describes the assembly, not the sources.
    Compile / packageSrc / mappings := (Compile / packageSrc / mappings).value.filterNot(_._2.startsWith("META-INF/")) ++
      legalFiles.value,
    Compile / packageDoc / mappings ++= legalFiles.value,
    pomPostProcess := { (node: scala.xml.Node) =>
      new scala.xml.transform.RuleTransformer(new scala.xml.transform.RewriteRule {
        override def transform(n: scala.xml.Node): Seq[scala.xml.Node] =
          if (n.label == "dependencies") Seq.empty else Seq(n)
      }).transform(node).head
    }
  )
}
