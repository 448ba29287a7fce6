package io.github.sparkkinesis.it.tools

import java.math.BigInteger
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.security.MessageDigest
import java.time.{Duration, LocalDate}
import java.util.Base64
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._
import scala.sys.process._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import io.github.sparkkinesis.it.{KinesisSimulator, PutRecordResult, TempDirs, TestEnv, TestKinesis, Wait}
import io.github.sparkkinesis.sink.executor.{KplAggregate, UserEntry}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import software.amazon.awssdk.core.SdkBytes
import software.amazon.awssdk.services.kinesis.model.{ListShardsRequest, PutRecordRequest, SplitShardRequest}

/**
 * Writes the checkpoints `CheckpointCompatibilitySuite` resumes: each one a query's checkpoint as this version of
 * the connector leaves it, under integration-tests/src/test/resources/checkpoints/<name>/, with `fixture.json`
 * beside Spark's files: the script of Kinesis calls that made the stream (with what Kinesis answered), the
 * query's options, and what each logged batch read.
 *
 * A fixture is kept from the version that wrote it, forever: it is the proof that later versions read that
 * version's checkpoints. Never regenerate one to make a test pass; a failing fixture is an incompatibility to fix
 * in the connector (or a reason to bump the offset version, with a reader of the old one). New fixtures get new
 * names (`v2-...` for a new offset version), and this refuses to overwrite one that exists. To add one, add a
 * [[Recipe]] and run, from the repository's root (with `make deps` done):
 *
 * {{{
 * SPARK_HOME=$PWD/.venv/lib/python3.11/site-packages/pyspark \
 *   java -Xmx3g -Xss4m -jar ~/.cache/spark-kinesis/sbt-launch-*.jar \
 *   'integrationTests/Test/runMain io.github.sparkkinesis.it.tools.CheckpointFixtures v1-new-name' < /dev/null
 * }}}
 *
 * Arguments: fixture names (default: every recipe), `--out <dir>` to write somewhere else (to compare two runs).
 *
 * Why a script can be replayed: the simulator numbers shards per stream and sequence numbers from one server-wide
 * counter that only CreateStream, PutRecord(s) and resharding advance, never a reader. So the same calls on a
 * fresh simulator give the same shard ids and sequence numbers; each recipe runs on a simulator of its own, and
 * the suite replays each script on a fresh one and checks every answer against the recorded one first.
 */
object CheckpointFixtures {

  // --- the script of a fixture: Kinesis calls, with what Kinesis answered when the fixture was written ---------

  sealed trait Step {
    def stream: String
    /** What Kinesis answered: a replay must get the same. */
    def answer: Seq[String]
  }
  final case class Create(stream: String, shards: Int, shardIds: Seq[String]) extends Step {
    def answer: Seq[String] = shardIds
  }
  final case class Put(stream: String, key: String, data: String, shardId: String, sequenceNumber: String)
    extends Step {
    def answer: Seq[String] = Seq(shardId, sequenceNumber)
  }
  /** A KPL aggregate of `records` (key, data), sent as the sink sends one: the first record's key and hash key. */
  final case class PutAggregate(stream: String, key: String, explicitHashKey: String, blob: Array[Byte],
      records: Seq[(String, String)], shardId: String, sequenceNumber: String) extends Step {
    def answer: Seq[String] = Seq(shardId, sequenceNumber)
  }
  final case class Split(stream: String, shardId: String, newStartingHashKey: String, children: Seq[String])
    extends Step {
    def answer: Seq[String] = children
  }

  /** The user records a script put, as the source should return them, in the order they were put. */
  def userRecords(steps: Seq[Step]): Seq[PutRecordResult] = steps.flatMap {
    case p: Put => Seq(PutRecordResult(p.key, p.data, p.shardId, p.sequenceNumber))
    case a: PutAggregate => a.records.map { case (k, d) => PutRecordResult(k, d, a.shardId, a.sequenceNumber) }
    case _ => Nil
  }

  /** Makes the calls of a script and records the answers; `endpoint` is the simulator's, for the query. */
  final class Script(kinesis: TestKinesis, val endpoint: String) {
    private val done = Vector.newBuilder[Step]
    def steps: Seq[Step] = done.result()

    def create(stream: String, shards: Int): Unit = {
      kinesis.createStream(stream, shards)
      done += Create(stream, shards, kinesis.shardIds(stream).sorted)
    }

    def put(stream: String, key: String, data: String): Unit = {
      val r = kinesis.put(stream, key, data.getBytes(UTF_8))
      done += Put(stream, key, data, r.shardId(), r.sequenceNumber())
    }

    /** Records `data-<i>` under keys `key-<i % keys>`, one call each so that they keep their order. */
    def putMany(stream: String, data: String, ids: Range, keys: Int = 7): Unit =
      ids.foreach(i => put(stream, s"key-${i % keys}", f"$data-$i%03d"))

    def putAggregate(stream: String, records: Seq[(String, String)]): Unit = {
      val aggregate = new KplAggregate
      records.foreach { case (k, d) => aggregate.add(UserEntry(k, null, d.getBytes(UTF_8))) }
      val key = records.head._1
      val hashKey = new BigInteger(1, MessageDigest.getInstance("MD5").digest(key.getBytes(UTF_8))).toString
      done += send(PutAggregate(stream, key, hashKey, aggregate.encode(), records, "", ""))
    }

    def send(a: PutAggregate): PutAggregate = {
      val r = kinesis.client.putRecord(PutRecordRequest.builder().streamName(a.stream).partitionKey(a.key)
        .explicitHashKey(a.explicitHashKey).data(SdkBytes.fromByteArray(a.blob)).build())
      a.copy(shardId = r.shardId(), sequenceNumber = r.sequenceNumber())
    }

    /** Splits a shard in the middle of its hash key range, as `TestKinesis.split` does. */
    def split(stream: String, shardId: String): Unit = {
      val range = shards(stream).find(_.shardId() == shardId).get.hashKeyRange()
      val middle = (BigInt(range.startingHashKey()) + BigInt(range.endingHashKey())) / 2
      done += splitAt(stream, shardId, middle.toString)
    }

    def splitAt(stream: String, shardId: String, newStartingHashKey: String): Split = {
      kinesis.control.splitShard(SplitShardRequest.builder().streamName(stream).shardToSplit(shardId)
        .newStartingHashKey(newStartingHashKey).build())
      kinesis.awaitActive(stream, Duration.ofSeconds(30))
      val children = shards(stream).filter(_.parentShardId() == shardId).map(_.shardId()).sorted
      Split(stream, shardId, newStartingHashKey, children)
    }

    private def shards(stream: String) =
      kinesis.control.listShards(ListShardsRequest.builder().streamName(stream).build()).shards().asScala.toSeq

    /**
     * Makes a recorded script's calls again, on a fresh simulator, and fails at the first answer that differs
     * from the recorded one: the checkpoint names shards and sequence numbers, so anything else is another stream.
     */
    def replay(recorded: Seq[Step]): Unit = recorded.zipWithIndex.foreach { case (step, i) =>
      val again = step match {
        case c: Create => kinesis.createStream(c.stream, c.shards); c.copy(shardIds = kinesis.shardIds(c.stream).sorted)
        case p: Put =>
          val r = kinesis.put(p.stream, p.key, p.data.getBytes(UTF_8))
          p.copy(shardId = r.shardId(), sequenceNumber = r.sequenceNumber())
        case a: PutAggregate => send(a)
        case s: Split => splitAt(s.stream, s.shardId, s.newStartingHashKey)
      }
      require(again.answer == step.answer, s"replaying step $i ($step) on a fresh simulator answered " +
        s"${again.answer.mkString(" ")}, the fixture recorded ${step.answer.mkString(" ")}: the simulator no longer " +
        "numbers shards and records as it did when the fixture was written (see SequenceNumbers, StreamState)")
      done += again
    }
  }

  // --- a fixture on disk ----------------------------------------------------------------------------------------

  /**
   * @param options the reader options the query ran with, without endpoint and credentials
   * @param queryStartedAfter how many steps were done when the writing query started
   * @param read each logged batch's user records (their data), in the order the query's sink received them
   */
  final case class Fixture(name: String, about: String, writtenBy: Map[String, String], options: Map[String, String],
      steps: Seq[Step], queryStartedAfter: Int, read: Map[Long, Seq[String]]) {
    def streams: Seq[String] = steps.collect { case c: Create => c.stream }
  }

  private val mapper = new ObjectMapper()
  val FileName = "fixture.json"

  def write(fixture: Fixture, dir: Path): Unit = {
    def obj(fields: (String, Any)*): String = {
      val m = new java.util.LinkedHashMap[String, Any]()
      fields.foreach { case (k, v) => m.put(k, v match { case s: Seq[_] => s.asJava; case other => other }) }
      mapper.writeValueAsString(m)
    }
    def step(s: Step): String = s match {
      case c: Create => obj("op" -> "create", "stream" -> c.stream, "shards" -> c.shards, "shardIds" -> c.shardIds)
      case p: Put => obj("op" -> "put", "stream" -> p.stream, "key" -> p.key, "data" -> p.data, "shardId" -> p.shardId,
        "sequenceNumber" -> p.sequenceNumber)
      case a: PutAggregate => obj("op" -> "putAggregate", "stream" -> a.stream, "key" -> a.key,
        "explicitHashKey" -> a.explicitHashKey, "records" -> a.records.map { case (k, d) => Seq(k, d).asJava },
        "blob" -> Base64.getEncoder.encodeToString(a.blob), "shardId" -> a.shardId,
        "sequenceNumber" -> a.sequenceNumber)
      case s: Split => obj("op" -> "split", "stream" -> s.stream, "shardId" -> s.shardId,
        "newStartingHashKey" -> s.newStartingHashKey, "children" -> s.children)
    }
    def ordered(m: Map[String, String]) = "{" + m.toSeq.sorted.map { case (k, v) =>
      s"${mapper.writeValueAsString(k)}: ${mapper.writeValueAsString(v)}" }.mkString(", ") + "}"
    val batches = fixture.read.toSeq.sortBy(_._1).map { case (b, d) =>
      s"""    "$b": ${mapper.writeValueAsString(d.asJava)}""" }
    // One step and one batch a line: small to keep, and a diff between two runs shows what differs.
    val text =
      s"""{
         |  "name": ${mapper.writeValueAsString(fixture.name)},
         |  "about": ${mapper.writeValueAsString(fixture.about)},
         |  "writtenBy": ${ordered(fixture.writtenBy)},
         |  "options": ${ordered(fixture.options)},
         |  "queryStartedAfter": ${fixture.queryStartedAfter},
         |  "steps": [
         |${fixture.steps.map(s => "    " + step(s)).mkString(",\n")}
         |  ],
         |  "read": {
         |${batches.mkString(",\n")}
         |  }
         |}
         |""".stripMargin
    Files.write(dir.resolve(FileName), text.getBytes(UTF_8))
  }

  def read(dir: Path): Fixture = {
    val root = mapper.readTree(Files.readAllBytes(dir.resolve(FileName)))
    def strings(n: JsonNode): Seq[String] = n.elements().asScala.map(_.asText()).toSeq
    def map(n: JsonNode): Map[String, String] = n.properties().asScala.map(e => e.getKey -> e.getValue.asText()).toMap
    val steps = root.get("steps").elements().asScala.map { s =>
      def str(f: String) = s.get(f).asText()
      str("op") match {
        case "create" => Create(str("stream"), s.get("shards").asInt(), strings(s.get("shardIds")))
        case "put" => Put(str("stream"), str("key"), str("data"), str("shardId"), str("sequenceNumber"))
        case "putAggregate" => PutAggregate(str("stream"), str("key"), str("explicitHashKey"),
          Base64.getDecoder.decode(str("blob")), s.get("records").elements().asScala.map(r => strings(r) match {
            case Seq(k, d) => (k, d)
          }).toSeq, str("shardId"), str("sequenceNumber"))
        case "split" => Split(str("stream"), str("shardId"), str("newStartingHashKey"), strings(s.get("children")))
        case other => throw new IllegalArgumentException(s"unknown step '$other' in ${dir.resolve(FileName)}")
      }
    }.toSeq
    Fixture(root.get("name").asText(), root.get("about").asText(), map(root.get("writtenBy")),
      map(root.get("options")), steps, root.get("queryStartedAfter").asInt(),
      root.get("read").properties().asScala.map(e => e.getKey.toLong -> strings(e.getValue)).toMap)
  }

  // --- a checkpoint as Spark writes it ----------------------------------------------------------------------------

  /** A source's position in one shard as the offset log holds it: `{"after":...,"sub":...}`, `{"shard_end":true}`... */
  type Positions = Map[(String, String), JsonNode]

  object CheckpointLog {
    /** The batch ids logged in `offsets` or `commits`. */
    def batches(checkpoint: Path, log: String): Seq[Long] = {
      val dir = checkpoint.resolve(log)
      if (!Files.isDirectory(dir)) Nil
      else {
        val files = Files.list(dir)
        try files.iterator().asScala.map(_.getFileName.toString).filter(_.forall(_.isDigit)).map(_.toLong).toSeq.sorted
        finally files.close()
      }
    }

    /** A batch's end offset: the offset file is `v1`, Spark's metadata, then a line per source (one here). */
    def offsetJson(checkpoint: Path, batch: Long): String =
      Files.readAllLines(checkpoint.resolve("offsets").resolve(batch.toString), UTF_8).asScala.last

    def positions(checkpoint: Path, batch: Long): Positions = {
      val streams = mapper.readTree(offsetJson(checkpoint, batch)).get("streams")
      (for {
        stream <- streams.fieldNames().asScala.toSeq
        shard <- streams.get(stream).fieldNames().asScala.toSeq
      } yield (stream, shard) -> streams.get(stream).get(shard)).toMap
    }
  }

  /**
   * Copies a checkpoint without Hadoop's `.crc` files (Spark reads a local checkpoint without them) and without the
   * logs of batches after `lastOffset` (and the commit of `lastOffset` when `committed` is false): the logs are
   * append-only, so what is left is the checkpoint the query had then.
   */
  def copyCheckpoint(from: Path, to: Path, lastOffset: Long = Long.MaxValue, committed: Boolean = true): Unit = {
    val walk = Files.walk(from)
    try walk.iterator().asScala.filter(Files.isRegularFile(_)).foreach { file =>
      val rel = from.relativize(file)
      val name = rel.getFileName.toString
      val batch = if (rel.getNameCount == 2 && name.forall(_.isDigit)) Some(name.toLong) else None
      val kept = !name.endsWith(".crc") && name != FileName && (rel.getName(0).toString match {
        case "offsets" => batch.forall(_ <= lastOffset)
        case "commits" => batch.forall(b => b < lastOffset || b == lastOffset && committed)
        case _ => true
      })
      if (kept) {
        Files.createDirectories(to.resolve(rel).getParent)
        Files.copy(file, to.resolve(rel))
      }
    } finally walk.close()
  }

  // --- the recipes --------------------------------------------------------------------------------------------

  /**
   * Where a recipe's checkpoint is cut: after batch `batch`'s offset, with or without its commit. A run is cut
   * afterwards because a running query cannot be stopped between two chosen batches from outside.
   */
  final case class Cut(batch: Long, committed: Boolean = true)

  /** What the writing query did: the batches it ran (id, then the data of each user record read). */
  type Run = (SparkSession, Map[String, String], String, Script) => Map[Long, Seq[String]]

  /**
   * @param before the calls made before the query runs
   * @param run    the query, from its first start
   * @param cut    where the checkpoint is kept, from the offsets it logged (None: the run did not give the case)
   * @param after  calls made after the checkpoint: records a resumed query reads that the writer never saw
   */
  final case class Recipe(name: String, about: String, options: Map[String, String], before: Script => Unit,
      run: Run, cut: (Seq[Step], Seq[(Long, Positions)]) => Option[Cut], after: Script => Unit)

  private def isAfter(p: JsonNode) = p.has("after")
  private def isEnd(p: JsonNode) = p.path("shard_end").asBoolean(false)

  /** The first logged batch every shard of the offset has been read in (`after`): mid-stream on each. */
  private def everyShardRead(minBatch: Long = 0, committed: Boolean = true)(steps: Seq[Step],
      offsets: Seq[(Long, Positions)]): Option[Cut] =
    offsets.collectFirst { case (b, p) if b >= minBatch && p.nonEmpty && p.values.forall(isAfter) => Cut(b, committed) }

  private val recipes: Seq[Recipe] = Seq(
    Recipe("v1-polling", "polling, two shards, each at a position in the middle of the stream (after + sub 0)",
      Map("streamName" -> "ckpt-polling", "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "6"),
      before = s => { s.create("ckpt-polling", 2); s.putMany("ckpt-polling", "p", 1 to 20) },
      run = availableNow, cut = everyShardRead(), after = _.putMany("ckpt-polling", "p", 21 to 26)),

    Recipe("v1-split", "a split before the checkpoint: the parent at shard_end, its children not read yet " +
      "(trim_horizon), more records put into the children afterwards",
      Map("streamName" -> "ckpt-split", "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "6"),
      before = s => {
        s.create("ckpt-split", 1)
        s.putMany("ckpt-split", "s", 1 to 12)
        s.split("ckpt-split", "shardId-000000000000")
        s.putMany("ckpt-split", "s", 13 to 24)
      },
      run = availableNow,
      cut = (_, offsets) => offsets.collectFirst {
        case (b, p) if p.get(("ckpt-split", "shardId-000000000000")).exists(isEnd) => Cut(b)
      },
      after = _.putMany("ckpt-split", "s", 25 to 30)),

    Recipe("v1-kpl", "KPL aggregates (6 user records each, plain records between): the checkpoint's position is " +
      "inside an aggregate (after + 0 < sub < 5)",
      Map("streamName" -> "ckpt-kpl", "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "4"),
      before = s => {
        s.create("ckpt-kpl", 1)
        for (a <- 0 until 3) {
          s.putAggregate("ckpt-kpl", (1 to 6).map(i => (s"key-${i % 3}", f"k-$a-$i%02d")))
          s.put("ckpt-kpl", "key-plain", s"k-$a-plain")
        }
      },
      run = availableNow,
      cut = (steps, offsets) => {
        val sizes = steps.collect { case a: PutAggregate => a.sequenceNumber -> a.records.size }.toMap
        offsets.collectFirst {
          case (b, p) if p.values.exists(q => isAfter(q) && sizes.get(q.get("after").asText()).exists { n =>
            q.get("sub").asLong() > 0 && q.get("sub").asLong() < n - 1
          }) => Cut(b)
        }
      },
      after = s => {
        s.putAggregate("ckpt-kpl", (1 to 4).map(i => (s"key-${i % 3}", f"k-3-$i%02d")))
        s.put("ckpt-kpl", "key-plain", "k-3-plain")
      }),

    Recipe("v1-two-streams", "two streams in one query (streamName a,b; two shards and one), each shard mid-stream",
      Map("streamName" -> "ckpt-two-a,ckpt-two-b", "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "6"),
      before = s => {
        s.create("ckpt-two-a", 2)
        s.create("ckpt-two-b", 1)
        for (i <- 1 to 12) {
          s.put("ckpt-two-a", s"key-${i % 7}", f"a-$i%03d")
          if (i <= 8) s.put("ckpt-two-b", s"key-${i % 7}", f"b-$i%03d")
        }
      },
      run = availableNow, cut = everyShardRead(),
      after = s => { s.putMany("ckpt-two-a", "a", 13 to 15); s.putMany("ckpt-two-b", "b", 9 to 11) }),

    Recipe("v1-efo", "consumerMode=efo (SubscribeToShard), two shards, each mid-stream",
      Map("streamName" -> "ckpt-efo", "consumerMode" -> "efo", "initialPosition" -> "trim_horizon",
        "maxRecordsPerTrigger" -> "6"),
      before = s => { s.create("ckpt-efo", 2); s.putMany("ckpt-efo", "e", 1 to 20) },
      run = availableNow, cut = everyShardRead(), after = _.putMany("ckpt-efo", "e", 21 to 26)),

    Recipe("v1-uncommitted", "the last batch logged in offsets but not committed (planned, not run): a resumed " +
      "query runs it again over the same range",
      Map("streamName" -> "ckpt-uncommitted", "initialPosition" -> "trim_horizon", "maxRecordsPerTrigger" -> "6"),
      before = s => { s.create("ckpt-uncommitted", 2); s.putMany("ckpt-uncommitted", "u", 1 to 20) },
      run = availableNow, cut = everyShardRead(minBatch = 1, committed = false),
      after = _.putMany("ckpt-uncommitted", "u", 21 to 26)),

    Recipe("v1-latest-uncommitted-first", "initialPosition=latest and no batch committed: batch 0 starts at the " +
      "pinned latest (at_timestamp) kept in sources/0/kinesis-initial-offset.json, not at a new pin",
      Map("streamName" -> "ckpt-latest", "initialPosition" -> "latest"),
      before = _.create("ckpt-latest", 2),
      run = fromLatest(_.putMany("ckpt-latest", "l", 1 to 12)), cut = (_, offsets) =>
        offsets.headOption.collect { case (0L, _) => Cut(0, committed = false) },
      after = _.putMany("ckpt-latest", "l", 13 to 18))
  )

  // --- runs of the writing query ------------------------------------------------------------------------------

  private def reader(spark: SparkSession, endpoint: String, options: Map[String, String]): DataFrame =
    spark.readStream.format("kinesis").options(options ++ Map("endpoint" -> endpoint, "region" -> TestEnv.region,
      "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey)).load()

  private def start(df: DataFrame, checkpoint: String, trigger: Trigger,
      batches: ConcurrentLinkedQueue[(Long, Seq[String])]): StreamingQuery =
    df.writeStream.option("checkpointLocation", checkpoint).trigger(trigger)
      .foreachBatch { (batch: DataFrame, id: Long) =>
        batches.add(id -> batch.collect().toSeq.map((r: Row) => new String(r.getAs[Array[Byte]]("data"), UTF_8)))
        ()
      }.start()

  /** Reads what is there with Trigger.AvailableNow: a run in several batches (maxRecordsPerTrigger), logged whole. */
  private def availableNow: Run = (spark, options, checkpoint, script) => {
    val batches = new ConcurrentLinkedQueue[(Long, Seq[String])]()
    val query = start(reader(spark, script.endpoint, options), checkpoint, Trigger.AvailableNow(), batches)
    require(query.awaitTermination(Duration.ofMinutes(5).toMillis), "the AvailableNow run did not end in 5 minutes")
    query.exception.foreach(e => throw e)
    batches.asScala.toMap
  }

  /** A query from `latest`: records are put once its start is pinned, then it stops after its first batch. */
  private def fromLatest(put: Script => Unit): Run = (spark, options, checkpoint, script) => {
    val batches = new ConcurrentLinkedQueue[(Long, Seq[String])]()
    val query = start(reader(spark, script.endpoint, options), checkpoint, Trigger.ProcessingTime(100), batches)
    try {
      Wait.until("the pinned start in the checkpoint", Duration.ofMinutes(2)) {
        query.exception.foreach(e => throw e)
        Files.exists(Paths.get(checkpoint, "sources", "0", "kinesis-initial-offset.json"))
      }
      put(script)
      Wait.until("the first batch to commit", Duration.ofMinutes(2)) {
        query.exception.foreach(e => throw e)
        Files.exists(Paths.get(checkpoint, "commits", "0"))
      }
    } finally query.stop()
    batches.asScala.toMap
  }

  // --- the generator ------------------------------------------------------------------------------------------

  def main(args: Array[String]): Unit = {
    val (outArg, names) = args.toList match {
      case "--out" :: dir :: rest => (Some(dir), rest)
      case rest => (None, rest)
    }
    val out = outArg.map(Paths.get(_))
      .getOrElse(TestEnv.repoRoot.toPath.resolve("integration-tests/src/test/resources/checkpoints"))
    val chosen = if (names.isEmpty) recipes else names.map(n => recipes.find(_.name == n).getOrElse(
      throw new IllegalArgumentException(s"no recipe '$n': ${recipes.map(_.name).mkString(", ")}")))
    chosen.foreach(r => require(!Files.exists(out.resolve(r.name)), s"${out.resolve(r.name)} exists: fixtures are " +
      "kept from the version that wrote them, never regenerated (give a new fixture a new name)"))
    val spark = SparkSession.builder().master("local[2]").appName("CheckpointFixtures")
      .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate()
    val ok = try { chosen.foreach(r => generate(spark, r, out.resolve(r.name))); true }
      catch { case e: Exception => e.printStackTrace(); false }
      finally spark.stop()
    sys.exit(if (ok) 0 else 1) // threads the SDK's clients leave would keep a forked run alive
  }

  private def generate(spark: SparkSession, recipe: Recipe, dir: Path): Unit = {
    val simulator = KinesisSimulator.start()
    val kinesis = new TestKinesis(simulator.endpoint)
    try {
      val script = new Script(kinesis, simulator.endpoint.toString)
      recipe.before(script)
      val startedAfter = script.steps.size
      val checkpoint = TempDirs.create(s"ckpt-${recipe.name}-")
      val batches = recipe.run(spark, recipe.options, checkpoint.toString, script)
      val logged = CheckpointLog.batches(checkpoint, "offsets").map(b => b -> CheckpointLog.positions(checkpoint, b))
      val cut = recipe.cut(script.steps, logged).getOrElse(throw new IllegalStateException(
        s"${recipe.name}: the run did not give the case (offsets: ${logged.map(_._2).mkString("; ")}); run it again"))
      val read = batches.filter(_._1 <= cut.batch)
      val expected = userRecords(script.steps).map(_.data)
      require(expected.distinct == expected, s"${recipe.name}: data values must be unique to tell records apart")
      require(batches.values.flatten.toSeq.sorted == batches.values.flatten.toSeq.distinct.sorted &&
        batches.values.flatten.toSet.subsetOf(expected.toSet), s"${recipe.name}: the writing run read wrong records")
      recipe.after(script)
      Files.createDirectories(dir)
      copyCheckpoint(checkpoint, dir, cut.batch, cut.committed)
      val offsetVersion = mapper.readTree(CheckpointLog.offsetJson(dir, cut.batch)).get("version").asText()
      write(Fixture(recipe.name, recipe.about, writtenBy(offsetVersion), recipe.options, script.steps, startedAfter,
        read), dir)
      println(s"${recipe.name}: cut after batch ${cut.batch}${if (cut.committed) "" else " (not committed)"} of " +
        s"${logged.size}: ${CheckpointLog.offsetJson(dir, cut.batch)}")
    } finally {
      kinesis.close()
      simulator.close()
    }
  }

  private def writtenBy(offsetVersion: String): Map[String, String] = {
    val commit = scala.util.Try(Process(Seq("git", "describe", "--always", "--dirty"), TestEnv.repoRoot).!!.trim)
    Map("connector" -> TestEnv.coordinates, "offsetVersion" -> offsetVersion, "spark" -> org.apache.spark.SPARK_VERSION,
      "commit" -> commit.getOrElse("unknown"), "date" -> LocalDate.now().toString)
  }
}
