package io.github.sparkkinesis.source
package driver

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

/**
 * Keeps the first offset of a query in the source's folder of the checkpoint. Spark does not log the start of
 * batch 0, so without this a restart before the first commit would pin `latest` again, somewhere else.
 */
final class InitialOffsetStore(checkpointLocation: String) {
  private val path = new Path(checkpointLocation, "kinesis-initial-offset.json")

  def getOrCreate(create: => KinesisSourceOffset): KinesisSourceOffset = {
    val fs = path.getFileSystem(SparkSession.active.sessionState.newHadoopConf())
    if (fs.exists(path)) {
      val in = fs.open(path)
      try KinesisSourceOffset.fromJson(new String(in.readAllBytes(), UTF_8))
      finally in.close()
    } else {
      val offset = create
      fs.mkdirs(path.getParent)
      val tmp = new Path(path.getParent, s".${path.getName}.${java.util.UUID.randomUUID()}.tmp")
      val out = fs.create(tmp, false)
      try out.write(offset.json.getBytes(UTF_8))
      finally out.close()
      if (!fs.rename(tmp, path)) {
        fs.delete(tmp, false)
        throw new IllegalStateException(s"could not write the initial offset to $path")
      }
      offset
    }
  }
}
