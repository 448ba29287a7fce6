package io.github.sparkkinesis.client

import org.scalatest.funsuite.AnyFunSuite

class TtlCacheSuite extends AnyFunSuite {
  private final class Clock { var now = 0L; def apply(): Long = now }

  test("an answer is reused for its time to live, per key, then loaded again with the previous one given") {
    val clock = new Clock
    val cache = new TtlCache[String, Int](100, () => clock())
    var loads = Seq.empty[(String, Option[Int])]
    def get(key: String, value: Int, maxAge: Long = 100) = cache.get(key, maxAge) { previous =>
      loads :+= key -> previous
      value
    }
    assert(get("a", 1) == 1 && get("b", 2) == 2)
    clock.now = 99
    assert(get("a", 10) == 1, "still fresh")
    assert(get("a", 11, maxAge = 50) == 11, "a caller may ask for a younger answer")
    clock.now = 200
    assert(get("b", 20) == 20)
    assert(loads == Seq("a" -> None, "b" -> None, "a" -> Some(1), "b" -> Some(2)))
    cache.clear()
    assert(get("a", 30) == 30 && loads.last == ("a" -> None))
  }

  test("a failing load keeps the last answer for the next try") {
    val clock = new Clock
    val cache = new TtlCache[String, Int](10, () => clock())
    cache.get("a")(_ => 1)
    clock.now = 20
    intercept[IllegalStateException](cache.get("a")(_ => throw new IllegalStateException("throttled")))
    assert(cache.get("a")(previous => previous.get + 1) == 2)
  }
}
