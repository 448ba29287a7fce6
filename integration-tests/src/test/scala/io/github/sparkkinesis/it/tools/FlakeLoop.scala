package io.github.sparkkinesis.it.tools

import java.util.concurrent.atomic.AtomicInteger

import scala.collection.mutable

import org.scalatest.{Args, Reporter, Suite}
import org.scalatest.events.{Event, TestFailed, TestSucceeded}

/**
 * A test that failed once is a defect until explained: this runs one integration suite (or one of its tests) many
 * times in one JVM, a fresh suite instance each time (its own emulator or simulator and Spark session), and
 * prints each failure with its run number and the tally at the end. `make flake-loop SUITE=... [TEST=...] RUNS=N`.
 *
 * Usage: FlakeLoop <suite class> <runs> [test name]
 */
object FlakeLoop {
  def main(args: Array[String]): Unit = {
    require(args.length >= 2, "usage: FlakeLoop <suite class> <runs> [test name]")
    val suiteClass = args(0)
    val runs = args(1).toInt
    val testName = args.lift(2).filter(_.nonEmpty)
    val failures = mutable.ArrayBuffer.empty[String]
    val passed = new AtomicInteger()
    val started = System.nanoTime()
    for (run <- 1 to runs) {
      val suite = Class.forName(suiteClass).getDeclaredConstructor().newInstance().asInstanceOf[Suite]
      val reporter = new Reporter {
        override def apply(event: Event): Unit = event match {
          case e: TestFailed =>
            val line = s"run $run: FAILED ${e.testName}: ${e.message}"
            failures += line
            System.out.println(line)
            e.throwable.foreach(_.printStackTrace(System.out))
          case _: TestSucceeded => passed.incrementAndGet()
          case _ =>
        }
      }
      try suite.run(testName, Args(reporter)).waitUntilCompleted()
      catch {
        case e: Throwable =>
          val line = s"run $run: ABORTED: $e"
          failures += line
          System.out.println(line)
          e.printStackTrace(System.out)
      }
      System.out.println(f"FlakeLoop $suiteClass run $run/$runs: ${failures.size} failures so far, " +
        f"${(System.nanoTime() - started) / 1e9}%.0f s")
    }
    System.out.println(s"FlakeLoop $suiteClass${testName.fold("")(t => s" [$t]")}: $runs runs, ${passed.get()} tests " +
      s"passed, ${failures.size} failed")
    failures.foreach(f => System.out.println(s"  $f"))
    sys.exit(if (failures.isEmpty) 0 else 1)
  }
}
