package io.github.sparkkinesis.it

import org.apache.spark.sql.{DataFrame, Row}
import org.scalatest.funsuite.AnyFunSuite

/** SPEC §2 SQL: `read_kinesis(...)` and `kinesis_shards(...)` with `spark.sql.extensions` set. */
class SqlFunctionsSuite extends AnyFunSuite with SourceTest {
  override protected def sparkConf: Map[String, String] =
    Map("spark.sql.extensions" -> "io.github.sparkkinesis.KinesisSparkExtensions")

  private def connection: Map[String, String] = Map("endpoint" -> emulator.endpoint.toString, "region" -> TestEnv.region,
    "awsAccessKey" -> TestEnv.accessKey, "awsSecretKey" -> TestEnv.secretKey)

  /** `name => 'value', ...` as a call's argument list. */
  private def arguments(options: Map[String, String]): String =
    options.map { case (k, v) => s"$k => '$v'" }.mkString(", ")

  private def readKinesis(stream: String, options: (String, String)*): String =
    s"read_kinesis(${arguments(connection ++ options + ("streamName" -> stream))})"

  private def kinesisShards(stream: String, options: (String, String)*): String =
    s"kinesis_shards(${arguments(connection ++ options + ("streamName" -> stream))})"

  private def records(df: DataFrame): Seq[ReadRecord] = df.collect().toSeq.map { r =>
    ReadRecord(0, r.getAs[String]("partitionKey"), new String(r.getAs[Array[Byte]]("data"), "UTF-8"),
      r.getAs[String]("shardId"), r.getAs[String]("sequenceNumber"), r.getAs[Long]("subSequenceNumber"), r.getAs[String]("stream"))
  }

  private def failure(block: => Any): String = intercept[IllegalArgumentException](block).getMessage

  test("read_kinesis reads exactly the records put, the same rows as format(\"kinesis\"), with typed and any-case parameters") {
    val stream = newStreamName("sql-batch")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, (1 to 40).map(i => (s"key-${i % 7}", s"record-$i")))
    val sql = spark.sql(s"SELECT * FROM read_kinesis(STREAMNAME => '$stream', ${arguments(connection)}, " +
      "InitialPosition => 'trim_horizon', maxRecordsPerFetch => 7, failOnDataLoss => true)")
    assert(sql.schema == spark.read.format("kinesis").options(connection + ("streamName" -> stream)).load().schema)
    val viaSql = records(sql)
    assertExactly(viaSql, put)
    val viaFormat = records(spark.read.format("kinesis")
      .options(connection ++ Map("streamName" -> stream, "initialPosition" -> "trim_horizon")).load())
    assert(viaSql.sortBy(_.sequenceNumber) == viaFormat.sortBy(_.sequenceNumber))
    assert(viaSql.forall(_.stream == stream))
    val described = spark.sql("DESCRIBE FUNCTION EXTENDED read_kinesis").collect().map(_.getString(0)).mkString("\n")
    assert(described.contains("read_kinesis(streamName => name") && described.contains("FROM STREAM read_kinesis"), described)
  }

  test("a batch read_kinesis starts at latest by default, as Databricks documents it; format(\"kinesis\") at trim_horizon") {
    val stream = newStreamName("sql-default")
    kinesis.createStream(stream, 1)
    val put = kinesis.putAll(stream, (1 to 5).map(i => ("k", s"v$i")))
    val putDone = System.currentTimeMillis()
    assertExactly(records(spark.read.format("kinesis").options(connection + ("streamName" -> stream)).load()), put)
    Wait.until("the records to be older than latest's margin") {
      System.currentTimeMillis() - putDone > io.github.sparkkinesis.source.driver.FetchPlanner.LatestLookBackMillis
    }
    assert(records(spark.sql(s"SELECT * FROM ${readKinesis(stream)}")).isEmpty)
    assertExactly(records(spark.sql(s"SELECT * FROM ${readKinesis(stream, "startingPosition" -> "TRIM_HORIZON")}")), put)
  }

  test("FROM STREAM read_kinesis(...) is a streaming read; STREAM kinesis_shards(...) is refused, saying why") {
    val stream = newStreamName("sql-stream")
    kinesis.createStream(stream, 2)
    val put = kinesis.putAll(stream, (1 to 25).map(i => (s"key-${i % 5}", s"record-$i")))
    val df = spark.sql(s"SELECT * FROM STREAM ${readKinesis(stream, "initialPosition" -> "trim_horizon")} WHERE shardId IS NOT NULL")
    assert(df.isStreaming)
    assertExactly(readAvailableNow(df).records, put)
    assert(spark.sql(s"SELECT * FROM STREAM(${readKinesis(stream)}) AS r").isStreaming, "the parenthesised form streams too")
    assert(!spark.sql(s"SELECT * FROM ${readKinesis(stream)}").isStreaming, "without STREAM the same call is a batch read")

    val refused = failure(spark.sql(s"SELECT * FROM STREAM ${kinesisShards(stream)}"))
    assert(refused.contains("kinesis_shards cannot be read as a stream: use it without STREAM"), refused)
  }

  test("a bad value or a misspelt parameter fails as format(\"kinesis\") does, naming the option; secrets stay out") {
    val stream = newStreamName("sql-errors")
    def viaFormat(options: (String, String)*) = failure(spark.read.format("kinesis")
      .options(connection ++ options + ("streamName" -> stream)).load().collect())

    val badValue = failure(spark.sql(s"SELECT * FROM ${readKinesis(stream, "maxRecordsPerFetch" -> "0")}"))
    assert(badValue == viaFormat("maxRecordsPerFetch" -> "0"))
    assert(badValue.contains("Invalid value '0' for option 'maxRecordsPerFetch'") && badValue.contains("1..10000"), badValue)

    val typo = failure(spark.sql(s"SELECT * FROM ${readKinesis(stream, "initialPositon" -> "latest")}"))
    assert(typo == viaFormat("initialPositon" -> "latest"))
    assert(typo.contains("'initialPositon'") && typo.contains("did you mean 'initialPosition'"), typo)

    val refusedOption = failure(spark.sql(s"SELECT * FROM ${readKinesis(stream, "serviceCredential" -> "uc-cred")}"))
    assert(refusedOption == viaFormat("serviceCredential" -> "uc-cred") && refusedOption.contains("is Databricks' and not supported"))

    val number = failure(spark.sql(s"SELECT * FROM read_kinesis(streamName => '$stream', maxRecordsPerFetch => 20000)"))
    assert(number.contains("Invalid value '20000' for option 'maxRecordsPerFetch'"), number)

    val marker = "external-id-marker-8f3a"
    val secret = failure(spark.sql(s"SELECT * FROM ${readKinesis(stream, "roleExternalId" -> marker)}"))
    assert(secret.contains("'roleExternalId' only applies with 'roleArn'") && !secret.contains(marker), secret)
    val shardsSecret = failure(spark.sql(s"SELECT * FROM ${kinesisShards(stream, "roleExternalId" -> marker)}"))
    assert(shardsSecret.contains("roleExternalId") && !shardsSecret.contains(marker), shardsSecret)

    val positional = failure(spark.sql(s"SELECT * FROM read_kinesis('$stream')"))
    assert(positional.contains("read_kinesis takes named parameters only"), positional)
    val twice = failure(spark.sql(s"SELECT * FROM read_kinesis(streamName => '$stream', STREAMNAME => 'other')"))
    assert(twice.contains("'streamName' of read_kinesis is given more than once"), twice)
    val missing = failure(spark.sql(s"SELECT * FROM read_kinesis(initialPosition => 'latest')"))
    assert(missing.contains("Option 'streamName' is required"), missing)
    val readOption = failure(spark.sql(s"SELECT * FROM ${kinesisShards(stream, "initialPosition" -> "latest")}"))
    assert(readOption.contains("Option 'initialPosition' does not apply to kinesis_shards"), readOption)
    // The listing runs in the query's task: the failure is the task's, with the source's message.
    val noStream = intercept[Exception](spark.sql(s"SELECT * FROM ${kinesisShards(stream)}").collect()).getMessage
    assert(noStream.contains(s"Kinesis stream '$stream' not found"), noStream)
  }

  test("EXPLAIN EXTENDED shows neither the secret parameters nor the options' secret values") {
    val stream = newStreamName("sql-explain")
    kinesis.createStream(stream, 1)
    kinesis.putAll(stream, Seq("k" -> "v"))
    val token = "session-token-marker-77c1"
    val externalId = "external-id-marker-5d20"
    val role = "arn:aws:iam::123456789012:role/reader"
    def explained(query: String): String = spark.sql(s"EXPLAIN EXTENDED $query").collect().map(_.getString(0)).mkString("\n")
    val plans = Seq(
      explained(s"SELECT * FROM ${readKinesis(stream, "awsSessionToken" -> token, "initialPosition" -> "trim_horizon")}"),
      // Neither a stream's plan nor kinesis_shards' calls AWS before the query runs: no STS for this role.
      explained(s"SELECT * FROM STREAM ${readKinesis(stream, "awsSessionToken" -> token, "roleArn" -> role,
        "roleExternalId" -> externalId)}"),
      explained(s"SELECT * FROM ${kinesisShards(stream, "roleArn" -> role, "roleExternalId" -> externalId)}"))
    for (plan <- plans) {
      assert(plan.contains("== Parsed Logical Plan ==") && plan.contains("== Physical Plan =="), plan)
      assert(plan.contains(stream), s"the plan names the stream: $plan")
      for (secret <- Seq(token, externalId, TestEnv.secretKey, TestEnv.accessKey)) {
        assert(!plan.contains(secret), s"'$secret' in\n$plan")
      }
    }
  }

  test("kinesis_shards after a split: the parent closed, two open children naming it, covering its hash range") {
    val stream = newStreamName("sql-shards")
    kinesis.createStream(stream, 1)
    val shards = spark.sql(s"SELECT * FROM ${kinesisShards(stream)}")
    val before = shards.collect().toSeq
    assert(before.size == 1 && before.head.getAs[Boolean]("isOpen"))
    val parent = before.head
    kinesis.split(stream, parent.getAs[String]("shardId"))

    // The same DataFrame, collected again: shards are listed when the query runs, not when it was defined.
    val after = shards.collect().toSeq
    assert(after.size == 3, after)
    assert(after.forall(_.getAs[String]("stream") == stream))
    val closed = after.find(_.getAs[String]("shardId") == parent.getAs[String]("shardId")).get
    assert(!closed.getAs[Boolean]("isOpen") && closed.getAs[String]("endingSequenceNumber") != null, closed)
    val children = after.filter(_.getAs[String]("parentShardId") == closed.getAs[String]("shardId"))
      .sortBy(r => BigInt(r.getAs[String]("startingHashKey")))
    assert(children.size == 2, after)
    for (child <- children) {
      assert(child.getAs[Boolean]("isOpen") && child.getAs[String]("endingSequenceNumber") == null, child)
      assert(child.getAs[String]("adjacentParentShardId") == null && child.getAs[String]("startingSequenceNumber") != null, child)
    }
    def hash(r: Row, column: String) = BigInt(r.getAs[String](column))
    assert(hash(children.head, "startingHashKey") == hash(closed, "startingHashKey"))
    assert(hash(children.head, "endingHashKey") + 1 == hash(children.last, "startingHashKey"))
    assert(hash(children.last, "endingHashKey") == hash(closed, "endingHashKey"))
    val open = spark.sql(s"SELECT count(*) FROM ${kinesisShards(stream)} WHERE isOpen").head().getLong(0)
    assert(open == 2)
  }
}
