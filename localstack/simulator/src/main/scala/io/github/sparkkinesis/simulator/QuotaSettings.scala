package io.github.sparkkinesis.simulator

/**
 * Which of the AWS quotas the simulator enforces, and a factor that scales every rate (0.1 makes a test's
 * throttling appear ten times sooner; 10 loosens them). Rates are AWS's documented per-shard, per-stream and
 * per-account limits. `consumersPerStream` is the enhanced fan-out consumers a stream allows: 20, or 50 on
 * On-demand Advantage streams.
 */
final case class QuotaSettings(
    enabled: Boolean = true,
    factor: Double = 1.0,
    writeBytes: Boolean = true,
    writeRecords: Boolean = true,
    readCalls: Boolean = true,
    readBytes: Boolean = true,
    listShards: Boolean = true,
    describeStreamSummary: Boolean = true,
    getShardIterator: Boolean = true,
    consumersPerStream: Int = QuotaSettings.ConsumersPerStream) {
  require(factor > 0, s"quota factor must be positive, got $factor")
  require(consumersPerStream > 0, s"consumers per stream must be positive, got $consumersPerStream")

  def writeBytesPerSecond: Double = QuotaSettings.WriteBytesPerSecond * factor
  def writeRecordsPerSecond: Double = QuotaSettings.WriteRecordsPerSecond * factor
  def readCallsPerSecond: Double = QuotaSettings.ReadCallsPerSecond * factor
  def readBytesPerSecond: Double = QuotaSettings.ReadBytesPerSecond * factor
  def listShardsPerSecond: Double = QuotaSettings.ListShardsPerSecond * factor
  def describeStreamSummaryPerSecond: Double = QuotaSettings.DescribeStreamSummaryPerSecond * factor
  def getShardIteratorPerSecond: Double = QuotaSettings.GetShardIteratorPerSecond * factor

  def on(kind: Boolean): Boolean = enabled && kind
}

object QuotaSettings {
  val WriteBytesPerSecond: Double = 1024.0 * 1024
  val WriteRecordsPerSecond: Double = 1000
  val ReadCallsPerSecond: Double = 5
  val ReadBytesPerSecond: Double = 2.0 * 1024 * 1024
  val ListShardsPerSecond: Double = 100
  val DescribeStreamSummaryPerSecond: Double = 20
  val GetShardIteratorPerSecond: Double = 5
  val ConsumersPerStream = 20

  val off: QuotaSettings = QuotaSettings(enabled = false)
}
