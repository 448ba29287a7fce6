package io.github.sparkkinesis.source
package driver

/**
 * The offsets a source made or read lately, found again by their JSON. Spark hands each batch's end offset back
 * as its JSON three times (the next batch's start, committing the sources, planning the batch) and the source
 * would parse it each time: at 10,000 shards over half a megabyte, tens of milliseconds a parse, and a new object
 * whose JSON is built again for the progress report. The JSON names the offset exactly (positions are written
 * losslessly), so the offset known under the same JSON is the one a parse would return.
 */
final class KnownOffsets(capacity: Int) {
  require(capacity > 0)
  // Newest first, with the JSON each was parsed from (null: its own, built when first compared). A handful at
  // most: a scan with string equality (lengths first) costs microseconds.
  private var recent = List.empty[(KinesisSourceOffset, String)]

  def remember(offset: KinesisSourceOffset): KinesisSourceOffset = synchronized {
    if (!recent.exists(_._1 eq offset)) recent = ((offset, null: String) :: recent).take(capacity)
    offset
  }

  /** The known offset whose JSON is `json`, else `json` parsed (and known from now on). */
  def parse(json: String): KinesisSourceOffset = synchronized {
    recent.collectFirst { case (offset, from) if (if (from != null) from else offset.json) == json => offset }
      .getOrElse {
        val parsed = KinesisSourceOffset.fromJson(json)
        recent = ((parsed, json) :: recent).take(capacity)
        parsed
      }
  }
}
