package io.github.sparkkinesis.simulator

import java.util.UUID

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.{BeforeAndAfterAll, BeforeAndAfterEach, Suite}
import software.amazon.awssdk.services.kinesis.KinesisClient
import software.amazon.awssdk.services.kinesis.model.{CreateStreamRequest, ListShardsRequest}

import scala.jdk.CollectionConverters._

/**
 * One in-process simulator per suite and a plain AWS SDK v2 client for it (CBOR, the SDK's default for Kinesis),
 * with retries off so every quota and fault reaches the test as the SDK reports it. Faults, quotas and counters
 * are reset between tests through the admin API, the way an external test drives the simulator.
 */
trait SimulatorFixture extends BeforeAndAfterAll with BeforeAndAfterEach { this: Suite =>
  private var serverOpt: Option[SimulatorServer] = None
  private var clientOpt: Option[KinesisClient] = None

  def server: SimulatorServer = serverOpt.getOrElse(throw new IllegalStateException("simulator not started"))
  def kinesis: KinesisClient = clientOpt.getOrElse(throw new IllegalStateException("simulator not started"))
  lazy val admin: SimulatorAdmin = new SimulatorAdmin(server.endpoint)

  /** Quotas start off so a test only meets the ones it switches on. */
  protected def initialSettings: Settings = Settings(quotas = QuotaSettings.off)

  def newStreamName(prefix: String = "sim"): String = s"$prefix-${UUID.randomUUID().toString.take(8)}"

  def createStream(name: String, shards: Int): Seq[String] = {
    kinesis.createStream(CreateStreamRequest.builder().streamName(name).shardCount(shards).build())
    kinesis.listShards(ListShardsRequest.builder().streamName(name).build()).shards().asScala.map(_.shardId()).toSeq
  }

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    serverOpt = Some(SimulatorServer.start(new Simulator(initialSettings)))
    clientOpt = Some(SdkClients.kinesis(server.endpoint))
  }

  override protected def beforeEach(): Unit = {
    super.beforeEach()
    admin.clearFaults()
    admin.settings(AdminJson.settings(new ObjectMapper(), initialSettings).toString)
    admin.resetCounters()
  }

  override protected def afterAll(): Unit =
    try {
      clientOpt.foreach(_.close())
      serverOpt.foreach(_.close())
    } finally super.afterAll()
}
