package io.github.sparkkinesis.source

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import io.github.sparkkinesis.source.ShardPosition._

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
    out.flush()
    bytes.toByteArray
  }

  def decode(data: Array[Byte]): Vector[SnapshotRequest] = {
    val in = new DataInputStream(new ByteArrayInputStream(data))
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
