package io.github.sparkkinesis.it

import org.scalatest.{BeforeAndAfterAll, Suite}

/** Mixin: one emulator and one test client per suite, and fresh stream names (the emulator slows as shards fill). */
trait EmulatorSuite extends BeforeAndAfterAll { this: Suite =>
  private var emulatorOpt: Option[KinesisEmulator] = None
  private var kinesisOpt: Option[TestKinesis] = None

  def emulator: KinesisEmulator = emulatorOpt.getOrElse(throw new IllegalStateException("emulator not started"))
  def kinesis: TestKinesis = kinesisOpt.getOrElse(throw new IllegalStateException("emulator not started"))

  def newStreamName(prefix: String = "it"): String = TestKinesis.freshName(prefix)

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    emulatorOpt = Some(KinesisEmulator.start())
    kinesisOpt = Some(new TestKinesis(emulator.endpoint))
  }

  override protected def afterAll(): Unit = {
    try {
      kinesisOpt.foreach(_.close())
      emulatorOpt.foreach(_.close())
    } finally super.afterAll()
  }
}
