package io.github.sparkkinesis.source

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import io.github.sparkkinesis.source.ShardPosition._

/**
 * What one snapshot task is sent for its `group` (its index among the trigger's groups; -1: a one-off job, held
 * nowhere): with no `base`, all `size` requests of the group; else only the `changed` ones (by index in the group)
 * since the generation `base` that its executor holds ([[executor.StandingGroups]]), the rest as they were.
 */
final case class SnapshotAsk(
    group: Int,
    generation: Long,
    base: Option[Long],
    size: Int,
    changed: Seq[(Int, SnapshotRequest)]) {
  def full: Boolean = base.isEmpty
}

object SnapshotAsk {
  /** Every request of a group, for an executor that holds nothing of it (or a job that keeps nothing). */
  def full(group: Int, generation: Long, requests: Seq[SnapshotRequest]): SnapshotAsk =
    SnapshotAsk(group, generation, None, requests.size, requests.iterator.zipWithIndex.map(_.swap).toVector)
}

/**
 * A snapshot task's requests as bytes. Every trigger with data sends every readable shard's request to the
 * executors, and Java serialization spent more CPU on them (a graph of case classes, options and BigInts per
 * shard, by reflection) than the tasks spent on the feeds; written field by field they take a tenth of the time.
 * Only ever read back by the same build (a task's bytes never outlive the job), so the layout has no version.
 */
object SnapshotRequests {
  def encode(requests: Seq[SnapshotRequest]): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(64 + requests.size * 64)
    val out = new DataOutputStream(bytes)
    write(out, requests)
    out.flush()
    bytes.toByteArray
  }

  def decode(data: Array[Byte]): Vector[SnapshotRequest] =
    read(new DataInputStream(new ByteArrayInputStream(data)))

  /** An ask: its header, then (when it is not full) the changed requests' indices, then those requests. */
  def encodeAsk(ask: SnapshotAsk): Array[Byte] = {
    val bytes = new ByteArrayOutputStream(64 + ask.changed.size * 68)
    val out = new DataOutputStream(bytes)
    out.writeInt(ask.group)
    out.writeLong(ask.generation)
    out.writeBoolean(ask.base.nonEmpty)
    ask.base.foreach(out.writeLong)
    out.writeInt(ask.size)
    if (!ask.full) {
      out.writeInt(ask.changed.size)
      ask.changed.foreach { case (i, _) => out.writeInt(i) }
    }
    write(out, ask.changed.map(_._2))
    out.flush()
    bytes.toByteArray
  }

  def decodeAsk(data: Array[Byte]): SnapshotAsk = {
    val in = new DataInputStream(new ByteArrayInputStream(data))
    val group = in.readInt()
    val generation = in.readLong()
    val base = if (in.readBoolean()) Some(in.readLong()) else None
    val size = in.readInt()
    val indices = if (base.isEmpty) null else Array.fill(in.readInt())(in.readInt())
    val requests = read(in)
    val changed = if (indices == null) requests.zipWithIndex.map(_.swap) else indices.toVector.zip(requests)
    SnapshotAsk(group, generation, base, size, changed)
  }

  private def write(out: DataOutputStream, requests: Seq[SnapshotRequest]): Unit = {
    out.writeInt(requests.size)
    var stream: String = null
    for (r <- requests) {
      // A task's shards are nearly always one stream's: its name is written when it changes.
      val same = r.key.stream == stream
      out.writeBoolean(same)
      if (!same) { stream = r.key.stream; out.writeUTF(stream) }
      out.writeUTF(r.key.shardId)
      writePosition(out, r.from)
      out.writeLong(r.maxRecords)
      out.writeLong(r.maxBytes)
      r.hashKeys match {
        case Some(span) =>
          out.writeBoolean(true)
          span.writeTo(out)
        case None => out.writeBoolean(false)
      }
      out.writeBoolean(r.closed)
    }
  }

  private def read(in: DataInputStream): Vector[SnapshotRequest] = {
    val n = in.readInt()
    val out = Vector.newBuilder[SnapshotRequest]
    out.sizeHint(n)
    var stream: String = null
    var i = 0
    while (i < n) {
      if (!in.readBoolean()) stream = in.readUTF()
      val key = ShardKey(stream, in.readUTF())
      val from = readPosition(in)
      val maxRecords = in.readLong()
      val maxBytes = in.readLong()
      val hashKeys = if (in.readBoolean()) Some(HashKeySpan.readFrom(in)) else None
      out += SnapshotRequest(key, from, maxRecords, maxBytes, hashKeys, in.readBoolean())
      i += 1
    }
    out.result()
  }

  private def writePosition(out: DataOutputStream, position: ShardPosition): Unit = position match {
    case After(seq, sub) => out.writeByte(0); out.writeUTF(seq); out.writeLong(sub)
    case AtTimestamp(ms) => out.writeByte(1); out.writeLong(ms)
    case TrimHorizon => out.writeByte(2)
    case ShardEnd => out.writeByte(3)
  }

  private def readPosition(in: DataInputStream): ShardPosition = in.readByte() match {
    case 0 => After(in.readUTF(), in.readLong())
    case 1 => AtTimestamp(in.readLong())
    case 2 => TrimHorizon
    case 3 => ShardEnd
    case other => throw new IllegalStateException(s"unknown shard position tag $other in a snapshot task")
  }
}
