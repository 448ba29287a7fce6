package io.github.sparkkinesis.source

import org.scalatest.funsuite.AnyFunSuite
import software.amazon.awssdk.services.kinesis.model.{Consumer, ConsumerStatus}
import io.github.sparkkinesis.source.driver.ConsumerLimit

/** A LimitExceededException for RegisterStreamConsumer: the stream's consumer limit, or a rate to wait out. */
class ConsumerLimitSuite extends AnyFunSuite {
  private def consumer(name: String, status: ConsumerStatus = ConsumerStatus.ACTIVE) =
    Consumer.builder().consumerName(name).consumerStatus(status).build()
  private def active(n: Int) = (1 to n).map(i => consumer(s"c$i"))

  test("twenty consumers or more, none ours, none deleting: the limit, whatever the stream allows (20 or 50)") {
    assert(ConsumerLimit.looksReached(active(20), "mine"))
    assert(ConsumerLimit.looksReached(active(50), "mine"))
    assert(ConsumerLimit.looksReached(
      active(16) ++ (1 to 4).map(i => consumer(s"new$i", ConsumerStatus.CREATING)),
      "mine"))
  }

  test("fewer than any stream allows: a rate (5 calls a second), not the limit") {
    assert(!ConsumerLimit.looksReached(active(19), "mine"))
    assert(!ConsumerLimit.looksReached(Nil, "mine"))
  }

  test("ours listed (registered meanwhile), one deleting (a place frees up), or five creating (Kinesis' concurrency rate): wait") {
    assert(!ConsumerLimit.looksReached(active(19) :+ consumer("mine", ConsumerStatus.CREATING), "mine"))
    assert(!ConsumerLimit.looksReached(active(20) :+ consumer("old", ConsumerStatus.DELETING), "mine"))
    assert(!ConsumerLimit.looksReached(
      active(15) ++ (1 to 5).map(i => consumer(s"new$i", ConsumerStatus.CREATING)),
      "mine"))
  }
}
