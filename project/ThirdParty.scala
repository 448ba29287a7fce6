import java.util.zip.ZipFile

import scala.jdk.CollectionConverters._

import sbt._
import sbt.Keys._
import sbtassembly.AssemblyPlugin.autoImport._

/**
 * The third-party code a shaded jar bundles, with the licenses the dependencies' POMs declare: written into the jar's
 * `META-INF/` (LICENSE, NOTICE, THIRD-PARTY.txt, and each bundled artifact's own license and notice files under
 * `META-INF/licenses/`), and checked against the classes the assembly actually holds (`thirdPartyCheck`).
 */
object ThirdParty {

  /** One bundled artifact: its coordinates, the licenses its POM (or a parent POM) declares, and its jar. */
  final case class Bundled(
      organization: String,
      name: String,
      revision: String,
      licenses: Seq[(String, Option[String])],
      jar: File
  ) {
    def coordinates: String = s"$organization:$name:$revision"
    def folder: String = s"$organization.$name"
    def isApache2: Boolean = licenses.exists { case (license, url) =>
      license.contains("Apache") && license.contains("2.0") || url.exists(_.contains("apache.org/licenses/LICENSE-2.0"))
    }
  }

  val thirdPartyBundled = taskKey[Seq[Bundled]]("the artifacts the assembly bundles, with their POMs' licenses")
  val thirdPartyFiles = taskKey[Seq[File]]("META-INF/LICENSE, NOTICE, THIRD-PARTY.txt and licenses/ of the jar")
  val thirdPartyCheck = taskKey[Unit]("fails when the assembly's classes and its META-INF/THIRD-PARTY.txt disagree")

  /** The list's file inside the jar; the wheel and `dist/` carry copies of it. */
  val ListPath = "META-INF/THIRD-PARTY.txt"

  /** A dependency file that says under what terms it is shared. */
  def isLegalFile(name: String): Boolean = {
    val upper = name.toUpperCase
    Seq("LICENSE", "LICENCE", "NOTICE").exists(upper.contains)
  }

  /** A line of the list: coordinates, then each license with its URL, tab-separated (parsed back by the check). */
  private def line(b: Bundled): String =
    (b.coordinates +: b.licenses.map { case (license, url) => license + url.fold("")(u => s" <$u>") }).mkString("\t")

  def settings(repoRoot: SettingKey[File]): Seq[Setting[_]] = Seq(
    thirdPartyBundled := {
      // The jars assembly merges: Runtime's external classpath (no Provided Spark), less Scala's own library,
      // which the assembly leaves to Spark (assemblyOption's includeScala = false).
      val licenses: Map[(String, String, String), Seq[(String, Option[String])]] =
        update.value.configuration(Runtime).toSeq.flatMap(_.modules).map { m =>
          (m.module.organization, m.module.name, m.module.revision) -> m.licenses.distinct
        }.toMap
      (Runtime / externalDependencyClasspath).value.flatMap { entry =>
        entry.get(moduleID.key).filter(_.organization != "org.scala-lang").map { m =>
          val found = licenses.getOrElse((m.organization, m.name, m.revision), Nil)
          if (found.isEmpty)
            sys.error(s"${m.organization}:${m.name}:${m.revision} declares no license in its POM (nor a parent POM): " +
              "find its license before bundling it")
          Bundled(m.organization, m.name, m.revision, found, entry.data)
        }
      }.sortBy(_.coordinates)
    },
    thirdPartyFiles := {
      val out = (Compile / resourceManaged).value / "META-INF"
      val bundled = thirdPartyBundled.value
      val root = repoRoot.value
      val artifact = s"${organization.value}:${moduleName.value}_${scalaBinaryVersion.value}:${version.value}"
      IO.delete(out)
      val legal = bundled.flatMap { b =>
        val zip = new ZipFile(b.jar)
        val own =
          try zip.entries.asScala.toList
              .filter(e => !e.isDirectory && e.getName.startsWith("META-INF/") && isLegalFile(e.getName.split('/').last))
              .filterNot(_.getName.startsWith("META-INF/versions/"))
              .map(e => (b, e.getName.split('/').last, IO.readStream(zip.getInputStream(e))))
          finally zip.close()
        // A jar without legal files: Apache-2.0's text is the jar's LICENSE; any other license's text must be kept
        // in legal/<group>.<artifact>/ (its POM gives only a name and a URL).
        val kept = (root / "legal" / b.folder * "*").get.map(f => (b, f.getName, IO.read(f)))
        if (own.isEmpty && kept.isEmpty && !b.isApache2)
          sys.error(s"${b.coordinates} (${b.licenses.map(_._1).mkString(", ")}) ships no license file: add its text " +
            s"as legal/${b.folder}/LICENSE")
        own ++ kept
      }
      val copies = legal.map { case (b, name, text) =>
        val file = out / "licenses" / b.folder / name
        IO.write(file, text)
        file
      }
      // One copy of each distinct notice (the AWS SDK's modules share one), headed by the artifacts that carry it.
      val notices = legal.filter(_._2.toUpperCase.contains("NOTICE")).groupBy(_._3.trim).toSeq.map {
        case (text, carriers) => s"--- ${carriers.map(_._1.coordinates).distinct.sorted.mkString(", ")} ---\n$text\n"
      }.sorted
      val notice = out / "NOTICE"
      IO.write(notice, IO.read(root / "NOTICE").trim + "\n\n" +
        s"This jar bundles the third-party artifacts listed in $ListPath. Their notices follow.\n\n" +
        notices.mkString("\n"))
      val license = out / "LICENSE"
      IO.copyFile(root / "LICENSE", license)
      val list = out / "THIRD-PARTY.txt"
      IO.write(list,
        s"# $artifact bundles these artifacts, relocated under ${Dependencies.shadedPrefix}.\n" +
          "# Generated by the build from the artifacts' POMs: group:artifact:version<TAB>license(s).\n" +
          "# Each artifact's own license and notice files are in META-INF/licenses/<group>.<artifact>/.\n" +
          bundled.map(line).mkString("", "\n", "\n"))
      Seq(license, notice, list) ++ copies
    },
    Compile / resourceGenerators += thirdPartyFiles.taskValue,
    thirdPartyCheck := {
      val jar = assembly.value
      val bundled = thirdPartyBundled.value
      val own = (Compile / classDirectory).value
      val relocatedPrefixes = ShadedJar.relocatedPaths ++ ShadedJar.extraRelocated.value.map(_.replace('.', '/') + "/")
      def relocate(path: String): String =
        if (relocatedPrefixes.exists(path.startsWith)) Dependencies.shadedPrefix.replace('.', '/') + "/" + path else path
      def classesOf(zipFile: File): Seq[String] = {
        val zip = new ZipFile(zipFile)
        try zip.entries.asScala.map(_.getName).filter(n => n.endsWith(".class") && !n.startsWith("META-INF/")).toList
        finally zip.close()
      }
      val ownClasses = (own ** "*.class").get.flatMap(IO.relativize(own, _)).map(relocate).toSet
      val source: Map[String, String] =
        bundled.flatMap(b => classesOf(b.jar).filterNot(_.endsWith("module-info.class")).map(relocate(_) -> b.coordinates)).toMap
      val zip = new ZipFile(jar)
      val (inJar, listed) =
        try {
          val names = zip.entries.asScala.map(_.getName).toList
          val entry = Option(zip.getEntry(ListPath)).getOrElse(sys.error(s"$jar has no $ListPath"))
          val text = IO.readStream(zip.getInputStream(entry))
          (names.filter(_.endsWith(".class")), text.linesIterator.filterNot(_.startsWith("#")).map(_.split('\t')(0)).toSet)
        } finally zip.close()
      val foreign = inJar.filterNot(ownClasses)
      val unknown = foreign.filterNot(source.contains)
      if (unknown.nonEmpty)
        sys.error(s"$jar holds ${unknown.size} classes of no bundled artifact, e.g. ${unknown.take(5).mkString(", ")}")
      val contributing = foreign.map(source).toSet
      val unlisted = contributing -- listed
      val absent = listed -- contributing
      if (unlisted.nonEmpty || absent.nonEmpty)
        sys.error(s"$ListPath in $jar disagrees with its classes: bundled but not listed ${unlisted.toSeq.sorted}; " +
          s"listed but not bundled ${absent.toSeq.sorted}")
      streams.value.log.info(s"$ListPath matches ${jar.getName}: ${listed.size} artifacts, ${foreign.size} classes")
    }
  )
}
