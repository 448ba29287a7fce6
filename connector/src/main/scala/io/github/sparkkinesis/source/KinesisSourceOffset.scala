package io.github.sparkkinesis.source

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.core.JsonGenerator
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.connector.read.streaming.{Offset => V2Offset}
import org.apache.spark.sql.execution.streaming.Offset

import io.github.sparkkinesis.source.ShardPosition._

/** The source's offset: a position per shard, per stream, stored in Spark's offset log as readable JSON. */
final case class KinesisSourceOffset(positions: Map[ShardKey, ShardPosition]) extends Offset {
  // Written to the offset log once per batch; an idle trigger at a thousand shards need not build it.
  override lazy val json: String = KinesisSourceOffset.toJson(this)

  /** Checked on every trigger against the query's streams (kept by [[movedBy]]: the same shards, the same streams). */
  def streams: Set[String] = {
    if (streamSet == null) streamSet = positions.keySet.map(_.stream)
    streamSet
  }
  @transient @volatile private var streamSet: Set[String] = _

  /** The shards read to their end (kept by [[movedBy]], as a trigger asks each time which shards are readable). */
  def ended: Set[ShardKey] = {
    if (endedSet == null) endedSet = positions.iterator.collect { case (key, ShardEnd) => key }.toSet
    endedSet
  }
  @transient @volatile private var endedSet: Set[ShardKey] = _

  /**
   * A listing this offset was found to hold exactly the shards of ([[driver.FetchPlanner.sameShards]]), kept by
   * [[movedBy]]: at 10,000 shards the check is 10,000 lookups, asked several times a trigger.
   */
  @transient @volatile private[source] var holdsListing: AnyRef = _

  def get(key: ShardKey): Option[ShardPosition] = positions.get(key)

  /**
   * The shards in the JSON's order. Sorted once per set of shards: an offset moved on by a batch ([[movedBy]]) has
   * its start's shards and takes their order (at 10,000 shards sorting the keys was most of each offset's JSON,
   * and every batch writes two: its end and the progress report's latest).
   */
  @transient @volatile private var order: Array[ShardKey] = _
  private[source] def sortedKeys: Array[ShardKey] = {
    if (order == null) {
      val keys = positions.keysIterator.toArray
      java.util.Arrays.sort(keys, KinesisSourceOffset.ByStreamAndShard)
      order = keys
    }
    order
  }

  /** This offset with the `moved` shards' positions replaced (or added). */
  def movedBy(moved: Iterable[(ShardKey, ShardPosition)]): KinesisSourceOffset = {
    val next = KinesisSourceOffset(positions ++ moved)
    // No shard added: the same shards, so the same order, streams and listing; the ended ones plus the moved ones'.
    if (next.positions.size == positions.size) {
      next.order = order
      next.streamSet = streamSet
      next.holdsListing = holdsListing
      if (endedSet != null) {
        next.endedSet = moved.foldLeft(endedSet) {
          case (ended, (key, ShardEnd)) => ended + key
          case (ended, (key, _)) => ended - key
        }
      }
    }
    next
  }
}

object KinesisSourceOffset {
  /**
   * The version this connector writes. It reads every version up to it, forever: a query's checkpoint must survive
   * an upgrade (docs/design/offsets.md, "Versioning"; the fixtures of CheckpointCompatibilitySuite prove it).
   */
  val Version = 1
  private val mapper = new ObjectMapper()

  /**
   * Streams by name, shards by id, so one offset always reads the same. Written straight to text, not through a
   * JSON tree: at 10,000 shards this runs once per batch on the driver, over a few hundred kilobytes.
   */
  def toJson(offset: KinesisSourceOffset): String = {
    val sorted = offset.sortedKeys
    val out = new java.io.StringWriter(64 + sorted.length * 96)
    val json = mapper.getFactory.createGenerator(out)
    json.writeStartObject()
    json.writeNumberField("version", Version)
    json.writeObjectFieldStart("streams")
    var stream: String = null
    for (key <- sorted) {
      val position = offset.positions(key)
      if (key.stream != stream) {
        if (stream != null) json.writeEndObject()
        stream = key.stream
        json.writeObjectFieldStart(stream)
      }
      json.writeObjectFieldStart(key.shardId)
      writePosition(json, position)
      json.writeEndObject()
    }
    if (stream != null) json.writeEndObject()
    json.writeEndObject()
    json.writeEndObject()
    json.close()
    out.toString
  }

  private object ByStreamAndShard extends java.util.Comparator[ShardKey] {
    override def compare(a: ShardKey, b: ShardKey): Int = {
      val byStream = a.stream.compareTo(b.stream)
      if (byStream != 0) byStream else a.shardId.compareTo(b.shardId)
    }
  }

  private def writePosition(json: JsonGenerator, position: ShardPosition): Unit = position match {
    case After(seq, sub) => json.writeStringField("after", seq); json.writeNumberField("sub", sub)
    case AtTimestamp(ms) => json.writeNumberField("at_timestamp", ms)
    case TrimHorizon => json.writeBooleanField("trim_horizon", true)
    case ShardEnd => json.writeBooleanField("shard_end", true)
  }

  def fromJson(json: String): KinesisSourceOffset = {
    def bad(why: String) = new IllegalArgumentException(
      s"Kinesis source offset is not in the expected format ($why). Expected " +
        s"""{"version":$Version,"streams":{"<stream>":{"<shardId>":{"after":"<seq>","sub":0}}}}, found: $json""")
    val root =
      try mapper.readTree(json)
      catch { case e: Exception => throw bad(e.getMessage) }
    if (root == null || !root.isObject) throw bad("not a JSON object")
    if (!root.hasNonNull("version")) throw bad("no 'version' field: was the checkpoint written by another connector?")
    // Leniently, as this reader always has: a version given as the string "1" is version 1.
    val version = root.get("version").asLong(-1)
    // The case upgrades make (a query moved back to an older connector): say so, and what to do about it.
    if (version > Version) throw newerVersion(version, json)
    if (version < 1) throw bad(s"version ${root.get("version")}; this connector reads versions 1 to $Version")
    val streams = root.path("streams")
    if (!streams.isObject) throw bad("no 'streams' object")
    val positions = for {
      stream <- streams.fieldNames().asScala.toSeq
      shardId <- streams.get(stream).fieldNames().asScala.toSeq
    } yield ShardKey(stream, shardId) -> readPosition(streams.get(stream).get(shardId), bad)
    KinesisSourceOffset(positions.toMap)
  }

  private def newerVersion(version: Long, json: String) = new IllegalArgumentException(
    s"This Kinesis source checkpoint was written by a newer version of spark-kinesis: its offset is version " +
      s"$version, and this connector reads offset versions up to $Version. Resume the query with a spark-kinesis " +
      s"that reads version $version, or start it on a new checkpoint location (it then starts from initialPosition). " +
      s"Offset found: ${abbreviated(json)}")

  // An offset names every shard: the start of a checkpoint of thousands is enough to recognise it.
  private def abbreviated(json: String): String =
    if (json.length <= 300) json else s"${json.take(300)}... (${json.length} characters)"

  private def readPosition(node: JsonNode, bad: String => Exception): ShardPosition =
    if (node.has("after")) After(node.get("after").asText(), node.path("sub").asLong(0))
    else if (node.has("at_timestamp")) AtTimestamp(node.get("at_timestamp").asLong())
    else if (node.path("trim_horizon").asBoolean(false)) TrimHorizon
    else if (node.path("shard_end").asBoolean(false)) ShardEnd
    else throw bad(s"unknown shard position $node")

  def from(offset: V2Offset): KinesisSourceOffset = offset match {
    case k: KinesisSourceOffset => k
    case other => fromJson(other.json())
  }
}
