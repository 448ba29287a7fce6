package io.github.sparkkinesis

import java.util.concurrent.{ExecutorService, Executors, ScheduledExecutorService, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger

/**
 * The connector's own JVM-wide threads: daemons, so a query's end or the JVM's never waits for them, named so a
 * thread dump says whose they are.
 */
private[sparkkinesis] object DaemonThreads {
  /** Threads named `name` (one thread) or `name-1`, `name-2`, ... */
  def factory(name: String, numbered: Boolean): ThreadFactory = {
    val count = new AtomicInteger()
    (r: Runnable) => {
      val t = new Thread(r, if (numbered) s"$name-${count.incrementAndGet()}" else name)
      t.setDaemon(true)
      t
    }
  }

  /** As many threads as work handed to it at once; a thread ends after a minute without work. */
  def cachedPool(name: String): ExecutorService = Executors.newCachedThreadPool(factory(name, numbered = true))

  def singleScheduler(name: String): ScheduledExecutorService =
    Executors.newSingleThreadScheduledExecutor(factory(name, numbered = false))
}
