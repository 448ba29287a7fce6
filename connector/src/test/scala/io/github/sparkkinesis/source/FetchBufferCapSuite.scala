package io.github.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite
import io.github.sparkkinesis.source.executor.{FetchBufferCap, Prefetcher}

/** `fetchBufferSize` as an executor can hold it: Databricks' 20gb default must not be taken literally. */
class FetchBufferCapSuite extends AnyFunSuite {
  private val GiB = 1024L * 1024 * 1024
  private val MiB = 1024L * 1024

  test("a buffer larger than a quarter of the heap is capped at that quarter") {
    assert(FetchBufferCap.limit(20 * GiB, 4 * GiB) == GiB)
    assert(FetchBufferCap.limit(20 * GiB, 512 * MiB) == 128 * MiB)
    assert(FetchBufferCap.limit(Long.MaxValue, 8 * GiB) == 2 * GiB)
  }

  test("a buffer the heap can hold is used as asked, up to the cap itself") {
    assert(FetchBufferCap.limit(256 * MiB, 4 * GiB) == 256 * MiB)
    assert(FetchBufferCap.limit(GiB, 4 * GiB) == GiB)
    assert(FetchBufferCap.limit(GiB + 1, 4 * GiB) == GiB)
  }

  test("the cap is above the default (an eighth of the heap): a default-sized buffer is never lowered") {
    val heap = Runtime.getRuntime.maxMemory()
    assert(FetchBufferCap.limit(Prefetcher.defaultBufferBytes, heap) == Prefetcher.defaultBufferBytes)
  }

  test("the INFO line says what was asked, the cap, the heap it comes from and why") {
    val line = FetchBufferCap.explanation(20 * GiB, 4 * GiB)
    assert(line.contains("fetchBufferSize asks for 20480 MiB"))
    assert(line.contains("at most 1024 MiB (1/4 of its 4096 MiB heap)"))
    assert(line.contains("instead of running the executor out of memory"))
  }

  test("this JVM's buffer: the option when it fits, else the cap") {
    val heap = Runtime.getRuntime.maxMemory()
    assert(FetchBufferCap(20L * 1024 * GiB) == heap / 4)
    assert(FetchBufferCap(MiB) == MiB)
  }
}
