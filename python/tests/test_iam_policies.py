"""The IAM policies of docs/security.md, checked against the simulator's SigV4 authentication.

Each policy marked `<!-- iam-policy: NAME -->` on the page is parsed, and the job it is for runs twice: with a key
allowed everything, to learn which operations the job calls (all must be in the policy, so that a call the
connector tolerates being denied cannot hide from the next run), then with a key denied every Kinesis operation but
the policy's actions, which must succeed. Then each action is denied in turn: the job must fail naming the call, or,
for the two actions the page says can be left out at a cost, succeed and log what it gives up. The simulator checks
actions, not resources; the resource forms are checked against AWS's reference table below instead.
"""

from __future__ import annotations

import json
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from stream_reads import kinesis_client, records_by_shard

PAGE = Path(__file__).resolve().parents[2] / "docs" / "security.md"
POLICIES = ("polling-read", "efo-read", "write", "kinesis-shards")
#: The key the tests' boto3 client signs with (stream_reads.kinesis_client): allowed everything, always.
ADMIN_KEY = {"test": {"secret": "test"}}

#: Every operation of the Kinesis API (AWS's API reference, 2025): a superset of what the simulator serves, so
#: "denied everything but the policy" cannot miss an operation the simulator learns later.
KINESIS_OPERATIONS = frozenset(
    {
        "AddTagsToStream",
        "CreateStream",
        "DecreaseStreamRetentionPeriod",
        "DeleteResourcePolicy",
        "DeleteStream",
        "DeregisterStreamConsumer",
        "DescribeAccountSettings",
        "DescribeLimits",
        "DescribeStream",
        "DescribeStreamConsumer",
        "DescribeStreamSummary",
        "DisableEnhancedMonitoring",
        "EnableEnhancedMonitoring",
        "GetRecords",
        "GetResourcePolicy",
        "GetShardIterator",
        "IncreaseStreamRetentionPeriod",
        "ListShards",
        "ListStreamConsumers",
        "ListStreams",
        "ListTagsForResource",
        "ListTagsForStream",
        "MergeShards",
        "PutRecord",
        "PutRecords",
        "PutResourcePolicy",
        "RegisterStreamConsumer",
        "RemoveTagsFromStream",
        "SplitShard",
        "StartStreamEncryption",
        "StopStreamEncryption",
        "SubscribeToShard",
        "TagResource",
        "UntagResource",
        "UpdateAccountSettings",
        "UpdateMaxRecordSize",
        "UpdateShardCount",
        "UpdateStreamMode",
        "UpdateStreamWarmThroughput",
    }
)
#: Actions whose resource is a consumer's ARN (Service Authorization Reference, "Actions defined by Amazon Kinesis
#: Data Streams"); every other action the connector needs acts on the stream's ARN.
CONSUMER_ACTIONS = frozenset({"SubscribeToShard", "DescribeStreamConsumer", "DeregisterStreamConsumer"})
STREAM_ARN = re.compile(r"arn:aws:kinesis:<region>:<account>:stream/<name>")
CONSUMER_ARN = re.compile(r"arn:aws:kinesis:<region>:<account>:stream/<name>/consumer/.+")
#: Called by an enhanced fan-out query only to re-read a range its executor does not hold (a replay): the policy
#: must have them, a first run need not call them.
EFO_REPLAY_ACTIONS = frozenset({"GetShardIterator", "GetRecords"})
SINK_LIST_SHARDS_WARN = "Allow kinesis:ListShards on the stream for per-shard pacing"


def marked_blocks() -> list[tuple[str, str, str]]:
    """(kind, name, JSON text) of every ```json block of the page, from the marker comment on the line before it."""
    lines = PAGE.read_text().splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != "```json":
            continue
        marker = re.fullmatch(r"<!-- (iam-policy|json): ([a-z-]+) -->", lines[i - 1].strip())
        assert marker, f"docs/security.md line {i + 1}: a json block without a marker comment on the line before"
        end = lines.index("```", i + 1)
        blocks.append((marker.group(1), marker.group(2), "\n".join(lines[i + 1 : end])))
    return blocks


def policy(name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [
        json.loads(text) for kind, n, text in marked_blocks() if kind == "iam-policy" and n == name
    ]
    assert len(found) == 1, f"docs/security.md has {len(found)} policies marked {name}"
    return found[0]


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def allowed_actions(doc: dict[str, Any]) -> frozenset[str]:
    """The Kinesis operations a policy's Allow statements name (no wildcards: the page's policies list actions)."""
    actions = set()
    for statement in doc["Statement"]:
        assert statement["Effect"] == "Allow", statement
        for action in as_list(statement["Action"]):
            service, _, operation = action.partition(":")
            assert service == "kinesis" and operation in KINESIS_OPERATIONS, f"not a Kinesis action: {action}"
            actions.add(operation)
    return frozenset(actions)


def test_every_json_block_parses_and_the_policies_name_the_resources_aws_documents() -> None:
    blocks = marked_blocks()
    for _kind, _name, text in blocks:
        json.loads(text)  # a block a reader copies must be valid JSON
    assert sorted(n for kind, n, _ in blocks if kind == "iam-policy") == sorted(POLICIES)
    for name in POLICIES:
        for statement in policy(name)["Statement"]:
            for action in as_list(statement["Action"]):
                operation = action.partition(":")[2]
                form = CONSUMER_ARN if operation in CONSUMER_ACTIONS else STREAM_ARN
                resources = as_list(statement["Resource"])
                assert all(form.fullmatch(r) for r in resources), (
                    f"{name}: {action} acts on a {'consumer' if form is CONSUMER_ARN else 'stream'} ARN, not {resources}"
                )


# --- Running jobs as a key ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """An access key of the simulator; its id is new for every run, so no client or cache of an earlier run
    (the connector keeps them per connection options) answers for it."""

    id: str
    secret: str

    @staticmethod
    def new() -> Key:
        return Key(f"AKIA{uuid.uuid4().hex[:16].upper()}", f"secret-{uuid.uuid4().hex}")


class Auth:
    """The simulator's SigV4 authentication, and its per-operation counters."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin

    def allow_only(self, key: Key, actions: frozenset[str]) -> None:
        deny = sorted(KINESIS_OPERATIONS - actions)
        self.admin.call("PUT", "auth", {"keys": {**ADMIN_KEY, key.id: {"secret": key.secret, "deny": deny}}})

    def called(self, run: Callable[[], None]) -> frozenset[str]:
        """The operations the simulator answered (denied calls are not counted) while `run` ran."""
        self.admin.reset_counters()
        run()
        return frozenset(self.admin.counters()["operations"])


@pytest.fixture
def auth(simulator_admin: Any) -> Iterator[Auth]:
    try:
        yield Auth(simulator_admin)
    finally:
        simulator_admin.call("DELETE", "auth")


@dataclass(frozen=True)
class Streams:
    endpoint: str
    read: str
    #: The read stream's records' data, and its shard ids.
    records: frozenset[str]
    shards: frozenset[str]
    write: str


@pytest.fixture(scope="module")
def streams(simulator_endpoint: str) -> Streams:
    client = kinesis_client(simulator_endpoint)
    suffix = uuid.uuid4().hex[:8]
    read, write = f"py-iam-read-{suffix}", f"py-iam-write-{suffix}"
    for name in (read, write):
        client.create_stream(StreamName=name, ShardCount=2)
        client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    records = [f"record-{i}" for i in range(20)]
    client.put_records(
        StreamName=read, Records=[{"PartitionKey": f"k{i}", "Data": d.encode()} for i, d in enumerate(records)]
    )
    shards = frozenset(s["ShardId"] for s in client.list_shards(StreamName=read)["Shards"])
    return Streams(simulator_endpoint, read, frozenset(records), shards, write)


def connection(streams: Streams, key: Key) -> dict[str, str]:
    return {"endpoint": streams.endpoint, "region": "us-east-1", "awsAccessKey": key.id, "awsSecretKey": key.secret}


@dataclass(frozen=True)
class Job:
    """The Spark part of a scenario (what the simulator counts), then checks of its outcome through boto3."""

    run: Callable[[], None]
    check: Callable[[], None] = lambda: None


def polling_read(spark: SparkSession, streams: Streams, key: Key) -> Job:
    def run() -> None:
        rows = (
            spark.read.format("kinesis")
            .options(streamName=streams.read, initialPosition="trim_horizon", **connection(streams, key))
            .load()
            .select(F.col("data").cast("string"))
            .collect()
        )
        assert frozenset(r[0] for r in rows) == streams.records

    return Job(run)


def consumers_left(streams: Streams) -> list[str]:
    """ARNs of the read stream's consumers that are registered and not being deleted."""
    client = kinesis_client(streams.endpoint)
    arn = client.describe_stream_summary(StreamName=streams.read)["StreamDescriptionSummary"]["StreamARN"]
    return [
        c["ConsumerARN"]
        for c in client.list_stream_consumers(StreamARN=arn)["Consumers"]
        if c["ConsumerStatus"] != "DELETING"
    ]


def efo_read(spark: SparkSession, streams: Streams, key: Key, timeout: int = 120) -> Job:
    name = f"iam_efo_{uuid.uuid4().hex[:8]}"

    def run() -> None:
        with tempfile.TemporaryDirectory(prefix="iam-efo-") as checkpoint:
            query = (
                spark.readStream.format("kinesis")
                .options(
                    streamName=streams.read,
                    initialPosition="trim_horizon",
                    consumerMode="efo",
                    requireConsumerDeregistration="true",
                    **connection(streams, key),
                )
                .load()
                .select(F.col("data").cast("string").alias("data"))
                .writeStream.format("memory")
                .queryName(name)
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            try:
                assert query.awaitTermination(timeout), f"the availableNow query did not finish within {timeout} s"
            finally:
                query.stop()
        assert frozenset(r.data for r in spark.table(name).collect()) == streams.records

    def check() -> None:
        # requireConsumerDeregistration: the query's consumer is DELETING (then gone) once it stopped.
        left = consumers_left(streams)
        assert not left, f"consumers still registered after the query stopped: {left}"

    return Job(run, check)


def batch_write(spark: SparkSession, streams: Streams, key: Key) -> Job:
    tag = uuid.uuid4().hex[:8]
    data = [f"{tag}-{i}" for i in range(20)]

    def run() -> None:
        (
            spark.createDataFrame([(f"k{i}", d) for i, d in enumerate(data)], "partitionKey string, data string")
            .write.format("kinesis")
            .mode("append")
            .options(streamName=streams.write, **connection(streams, key))
            .save()
        )

    def check() -> None:
        stored = {
            r["Data"].decode()
            for _, records in records_by_shard(kinesis_client(streams.endpoint), streams.write)
            for r in records
        }
        assert set(data) <= stored, f"records not written: {sorted(set(data) - stored)}"

    return Job(run, check)


def shard_listing(spark: SparkSession, streams: Streams, key: Key) -> Job:
    # kinesis_shards(...) resolves to this provider; the SQL extension is a static setting the shared session lacks.
    def run() -> None:
        rows = (
            spark.read.format("io.github.sparkkinesis.sql.KinesisShardsProvider")
            .options(streamName=streams.read, **connection(streams, key))
            .load()
            .collect()
        )
        assert frozenset(r.shardId for r in rows) == streams.shards

    return Job(run)


JOBS: dict[str, Callable[[SparkSession, Streams, Key], Job]] = {
    "polling-read": polling_read,
    "efo-read": efo_read,
    "write": batch_write,
    "kinesis-shards": shard_listing,
}


@pytest.mark.parametrize("name", POLICIES)
def test_the_policy_is_enough_for_its_job_and_the_job_calls_nothing_else(
    name: str, spark: SparkSession, streams: Streams, auth: Auth
) -> None:
    allowed = allowed_actions(policy(name))
    unrestricted = Key.new()
    auth.allow_only(unrestricted, KINESIS_OPERATIONS)
    job = JOBS[name](spark, streams, unrestricted)
    called = auth.called(job.run)
    job.check()
    assert called <= allowed, f"the {name} job calls {sorted(called - allowed)}, which its policy does not allow"
    optional = EFO_REPLAY_ACTIONS if name == "efo-read" else frozenset()
    assert allowed - optional <= called, f"the {name} policy allows {sorted(allowed - optional - called)}, never called"

    restricted = Key.new()
    auth.allow_only(restricted, allowed)
    job = JOBS[name](spark, streams, restricted)
    job.run()
    job.check()


def failure_of(job: Job) -> str:
    with pytest.raises(Exception) as failure:
        job.run()
    return str(failure.value)


@contextmanager
def jvm_warnings(spark: SparkSession, logger: str) -> Iterator[Callable[[], str]]:
    """What `logger` logs at WARN and above in the driver JVM (local mode: the executors' too) while the block runs."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    core = jvm.org.apache.logging.log4j.core
    layout = core.layout.PatternLayout.newBuilder().withPattern("%p %m%n").build()
    writer = jvm.java.io.StringWriter()
    appender = core.appender.WriterAppender.createAppender(layout, None, writer, "iam-policy-test", False, True)
    appender.start()
    target = jvm.org.apache.logging.log4j.LogManager.getContext(False).getLogger(logger)
    target.addAppender(appender)
    try:
        yield lambda: str(writer.toString())
    finally:
        target.removeAppender(appender)
        appender.stop()


#: Every action of every policy, but those an enhanced fan-out query calls only to re-read (a first run cannot show
#: they are needed; docs/security.md says when they are).
NEEDED = [
    pytest.param(name, action)
    for name in POLICIES
    for action in sorted(allowed_actions(policy(name)))
    if not (name == "efo-read" and action in EFO_REPLAY_ACTIONS)
]
#: A denied call fails the job within seconds (it is not retried); a query still running after this failed to.
FAILS_WITHIN_SECONDS = 15


@pytest.mark.parametrize(("name", "action"), NEEDED)
def test_without_any_one_action_the_job_fails_naming_it_or_logs_what_it_gives_up(
    name: str, action: str, spark: SparkSession, streams: Streams, auth: Auth
) -> None:
    key = Key.new()
    auth.allow_only(key, allowed_actions(policy(name)) - {action})
    job = efo_read(spark, streams, key, FAILS_WITHIN_SECONDS) if name == "efo-read" else JOBS[name](spark, streams, key)
    if (name, action) == ("write", "ListShards"):
        # The sink paces the stream as a whole instead of per shard, and says so.
        with jvm_warnings(spark, "io.github.sparkkinesis.sink.executor.ShardMap") as logged:
            job.run()
        job.check()
        assert SINK_LIST_SHARDS_WARN in logged(), logged()
        assert SINK_LIST_SHARDS_WARN in PAGE.read_text(), "docs/security.md no longer quotes the WARN the sink logs"
    elif (name, action) == ("efo-read", "DeregisterStreamConsumer"):
        # The query stops normally; its consumer stays registered, with a WARN.
        with jvm_warnings(spark, "io.github.sparkkinesis.source.driver.FanOutConsumers") as logged:
            job.run()
        left = consumers_left(streams)
        kinesis = kinesis_client(streams.endpoint)
        for arn in left:
            kinesis.deregister_stream_consumer(ConsumerARN=arn)
        assert left, "the consumer was deregistered without kinesis:DeregisterStreamConsumer"
        assert "Deregistering enhanced fan-out consumer" in logged() and "AccessDeniedException" in logged(), logged()
    else:
        message = failure_of(job)
        assert f"{action} failed with AccessDeniedException" in message, message[-3000:]
        assert key.secret not in message, "a failure shows the secret key"
