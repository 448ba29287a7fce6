package io.github.sparkkinesis.it

import org.scalatest.{BeforeAndAfterAll, Suite}

/**
 * Mixin: one Kinesis simulator and one test client per suite, like EmulatorSuite for kinesis-mock. Override
 * `simulatorOptions` to start it differently (quotas are on, at AWS's rates, unless told otherwise).
 */
trait SimulatorSuite extends BeforeAndAfterAll { this: Suite =>
  private var simulatorOpt: Option[KinesisSimulator] = None
  private var clientOpt: Option[TestKinesis] = None

  protected def simulatorOptions: Seq[String] = Nil

  def simulator: KinesisSimulator = simulatorOpt.getOrElse(throw new IllegalStateException("simulator not started"))
  def simulatorKinesis: TestKinesis = clientOpt.getOrElse(throw new IllegalStateException("simulator not started"))

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    simulatorOpt = Some(KinesisSimulator.start(simulatorOptions))
    clientOpt = Some(new TestKinesis(simulator.endpoint))
  }

  override protected def afterAll(): Unit = {
    try {
      clientOpt.foreach(_.close())
      simulatorOpt.foreach(_.close())
    } finally super.afterAll()
  }
}
