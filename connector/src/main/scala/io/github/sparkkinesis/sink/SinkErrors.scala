package io.github.sparkkinesis.sink

import io.github.sparkkinesis.client.{ConnectionConfig, StreamNotFound}

/** The input cannot be written at all (missing column, wrong type, no target stream): reported at query start. */
class KinesisSinkSchemaException(message: String) extends IllegalArgumentException(message)

/** One record can never be written (bad key, too large): the task fails after delivering what it accepted. */
class KinesisSinkRecordException(message: String) extends IllegalArgumentException(message)

/** Kinesis did not take records within the retry policy, or refused a request outright. */
class KinesisSinkWriteException(message: String, cause: Throwable = null) extends RuntimeException(message, cause)

/** The stream does not exist (in the sink's region, at its endpoint). */
class KinesisSinkStreamNotFoundException(message: String) extends KinesisSinkWriteException(message)

/** Every message the sink shows a user, in one place so their wording stays consistent with SPEC §5. */
object SinkErrors {
  /** A retried task whose earlier attempt rejected a row: the same rows would meet the same row again. */
  def rejectedBefore(message: String): KinesisSinkRecordException = new KinesisSinkRecordException(
    s"An earlier attempt of this task rejected a row, so this retry sends nothing (the rows before it were " +
      s"delivered once): $message")

  private val KeyShown = 40

  def schema(problem: String): KinesisSinkSchemaException =
    new KinesisSinkSchemaException(s"Kinesis sink: $problem.")

  /** Enough of a partition key to find the row, never a whole 256-character key in a log line. */
  def showKey(key: String): String =
    if (key.length <= KeyShown) s"'$key'" else s"'${key.take(KeyShown)}...' (${key.length} characters)"

  /**
   * A row that can never be written. `at` is its position in the task ([[SinkInput.position]]): the row is checked
   * before it joins a request, so nothing of it was sent, and the task delivered every row before it first.
   */
  def badRecord(stream: String, problem: String, at: String): KinesisSinkRecordException =
    new KinesisSinkRecordException(s"Kinesis sink: cannot write $at to stream '$stream': $problem. " +
      "Nothing of that row was sent; the rows the task took before it were delivered.")

  def nullKey(stream: String, at: String): KinesisSinkRecordException =
    badRecord(stream, "partitionKey is null; Kinesis needs a partition key of 1 to 256 characters", at)

  def keyLength(stream: String, key: String, chars: Int, at: String): KinesisSinkRecordException =
    badRecord(stream, s"partitionKey ${showKey(key)} has $chars characters; Kinesis accepts 1 to 256", at)

  /** `problem` says what and where ([[SinkInput.malformedUtf8]]); the key is shown as Java decodes it. */
  def keyNotUtf8(stream: String, key: String, problem: String, at: String): KinesisSinkRecordException =
    badRecord(
      stream,
      s"partitionKey ${showKey(key)} is not valid UTF-8: it holds $problem, so Kinesis would store a different " +
        "key (U+FFFD in place of each bad sequence, as shown); make the column valid text, e.g. hex-encode binary keys",
      at
    )

  def nullData(stream: String, key: String, at: String): KinesisSinkRecordException =
    badRecord(stream, s"data is null for partitionKey ${showKey(key)}", at)

  def tooLarge(
      stream: String,
      key: String,
      size: Long,
      limit: Long,
      what: String,
      at: String): KinesisSinkRecordException =
    badRecord(
      stream,
      s"the record with partitionKey ${showKey(key)} is $size bytes (data plus partition key); " +
        s"the limit is $limit bytes ($what)",
      at)

  def badHashKey(stream: String, key: String, hashKey: String, at: String): KinesisSinkRecordException =
    badRecord(
      stream,
      s"explicitHashKey '${hashKey.take(KeyShown)}' of partitionKey ${showKey(key)} is not a " +
        "decimal integer in 0..2^128-1 (digits only, no sign, no leading zero)",
      at
    )

  def nullStream(column: String, key: String, at: String): KinesisSinkRecordException =
    new KinesisSinkRecordException(s"Kinesis sink: the '$column' column is null in $at (partitionKey " +
      s"${showKey(key)}) and no 'streamName' option is set. Nothing of that row was sent; the rows the task took " +
      "before it were delivered.")

  /** A `stream` column value that is neither a stream name nor an ARN; `problem` from [[SinkInput.badStreamName]]. */
  def badStream(column: String, value: String, problem: String, at: String): KinesisSinkRecordException =
    badRecord(value.take(KeyShown), s"the '$column' column's value cannot name a Kinesis stream: $problem", at)

  /** A `stream` column naming a stream that does not exist; `notFound` is [[streamNotFound]]'s message. */
  def streamMissing(column: String, stream: String, notFound: String, at: String): KinesisSinkRecordException =
    badRecord(stream, s"the '$column' column names a stream that does not exist ($notFound)", at)

  /**
   * The sink's client calls one region: a row naming a stream of another region by ARN would otherwise go to the
   * stream of the same name in the sink's region.
   */
  def arnInOtherRegion(
      column: String,
      arn: String,
      arnRegion: String,
      region: String,
      at: String): KinesisSinkRecordException =
    badRecord(
      arn,
      s"the '$column' column names a stream in region $arnRegion but the sink writes to " +
        s"region $region (option 'region', or the SDK's region chain without it): write those rows with a sink " +
        "set to that region",
      at
    )

  def streamNotFound(stream: String, connection: ConnectionConfig): KinesisSinkWriteException =
    new KinesisSinkStreamNotFoundException(StreamNotFound.message(stream, connection))

  /** Records Kinesis kept refusing until the retry policy ran out, or refused with a code that no retry can fix. */
  def undelivered(stream: String, codes: Map[String, Int], attempts: Int, exhausted: Boolean): KinesisSinkWriteException = {
    val count = codes.values.sum
    val byCode = codes.toSeq.sortBy(-_._2).map { case (c, n) => s"$c x$n" }.mkString(", ")
    val why = if (exhausted) s"after $attempts attempts (retryMaxAttempts)" else "with an error no retry can fix"
    new KinesisSinkWriteException(
      s"Kinesis sink: $count record(s) could not be written to stream '$stream' $why; error codes: $byCode")
  }

  /** Access denied, bad credentials, an unreachable endpoint: after the SDK's retries, if the error allows any. */
  def describeFailed(stream: String, cause: Throwable): KinesisSinkWriteException =
    new KinesisSinkWriteException(
      s"Kinesis sink: DescribeStreamSummary of stream '$stream' failed and was not retried further: ${cause.getMessage}",
      cause)

  def aggregationWithoutShards(stream: String): KinesisSinkWriteException =
    new KinesisSinkWriteException(s"Kinesis sink: aggregation=kpl packs records per shard and needs the shards of " +
      s"stream '$stream', which could not be listed (see the WARN above): allow kinesis:ListShards on the stream, " +
      "or write without aggregation")

  def requestFailed(stream: String, cause: Throwable): KinesisSinkWriteException =
    new KinesisSinkWriteException(
      s"Kinesis sink: PutRecords to stream '$stream' failed and was not retried further: ${cause.getMessage}",
      cause)
}
