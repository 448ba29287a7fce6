package io.github.sparkkinesis.it

import java.nio.file.{Files, Path}
import java.util.Comparator
import java.util.concurrent.ConcurrentLinkedQueue

import scala.util.Try

/**
 * Folders the tests make under java.io.tmpdir (checkpoints, emulator state, work folders of child drivers),
 * deleted when the test JVM exits: a failing test's folders stay readable while it runs, and repeated runs on one
 * machine do not pile up hundreds of them.
 */
object TempDirs {
  private val made = new ConcurrentLinkedQueue[Path]()

  sys.addShutdownHook(made.forEach(dir => deleteTree(dir)))

  def create(prefix: String): Path = {
    val dir = Files.createTempDirectory(prefix)
    made.add(dir)
    dir
  }

  /** Best effort: a file a process still writes may come back, and is left. */
  private def deleteTree(dir: Path): Unit = Try {
    val walk = Files.walk(dir)
    try walk.sorted(Comparator.reverseOrder[Path]()).forEach(p => Try(Files.deleteIfExists(p)))
    finally walk.close()
  }
}
