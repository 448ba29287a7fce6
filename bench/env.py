"""What every benchmark shares: the simulator (through the launcher and admin client the tests use), clients,
stream helpers, the Spark session, the machine description and the run settings."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import boto3  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parent.parent


def _root_conftest() -> Any:
    """The root conftest.py, which holds the one simulator launcher and admin client. Loaded by path under its
    own name: inside pytest the module name `conftest` belongs to whichever test folder's conftest came first."""
    name = "spark_kinesis_root_conftest"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "conftest.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_fixtures = _root_conftest()
SimulatorAdmin = _fixtures.SimulatorAdmin
SimulatorLauncher = _fixtures.SimulatorLauncher
launched = _fixtures.launched

REGION = "us-east-1"
CREDENTIALS = {"awsAccessKey": "test", "awsSecretKey": "test"}


@dataclass
class Settings:
    """Sizes of one run. `smoke` is what the pytest smoke test runs, `quick` a short run, the default the full one."""

    mode: str = "full"
    repetitions: int = 3
    read_shards: list[int] = field(default_factory=lambda: [1, 4, 16])
    record_sizes: list[int] = field(default_factory=lambda: [100, 1024])
    #: records prefilled per read shape, by record size: enough for several seconds of draining
    read_records: dict[int, int] = field(default_factory=lambda: {100: 300_000, 1024: 80_000})
    #: records per timed write, by record size: long enough that job and task start are a small part of the time
    #: (a warm write job costs 40-60 ms before its first request; 150,000 x 1 KiB took half a second)
    write_records: dict[int, int] = field(default_factory=lambda: {100: 1_200_000, 1024: 600_000})
    #: untimed writes by each write contender per record size first: both JVMs (driver and simulator) compile the
    #: write path over the first millions of records, and without them the first contender warms up the second
    write_warmups: int = 5
    #: timed writes per contender and shape: single writes spread by ±20 % run to run (the simulator's and the
    #: driver's collections), and the median of three moved by up to 0.28 between runs of the same code
    write_repetitions: int = 5
    #: the hand-written boto3 loops are slow; they run for at most this long and report their rate
    boto3_seconds: float = 8.0
    quota_shards: list[int] = field(default_factory=lambda: [1, 4])
    quota_seconds: float = 15.0
    #: source option sets read under quota: "defaults" (what the targets judge) and variants to compare
    quota_variants: dict[str, dict[str, str]] = field(default_factory=lambda: {"defaults": {}})
    latency_seconds: float = 30.0
    latency_rate: int = 200
    #: latency when traffic is rare (bench/lull.py, #42): a few shards, a record after each of `lull_count`
    #: silences; then a wide stream silent for `sparse_settle_seconds`, then a record every
    #: `sparse_interval_seconds` on a random shard
    lull_shards: int = 4
    lull_silence_seconds: float = 60.0
    lull_count: int = 5
    sparse_shards: int = 1000
    sparse_settle_seconds: float = 60.0
    sparse_interval_seconds: float = 1.5
    sparse_seconds: float = 120.0
    #: enhanced fan-out against polling (bench/fanout.py): the backlog per shard is this many seconds of 2 MiB/s
    fanout_seconds: float = 20.0
    #: real-time mode against micro-batches (bench/realtime.py): writer rates, read modes, seconds per run
    realtime_rates: list[int] = field(default_factory=lambda: [50, 5000])
    realtime_modes: list[str] = field(default_factory=lambda: ["polling", "efo"])
    realtime_seconds: float = 20.0
    #: the sink with and without aggregation=kpl under write quotas (bench/aggregation.py): seconds each write
    #: takes at its quota, and seconds of the 50 rows/s latency run
    aggregation_seconds: float = 15.0
    aggregation_latency_seconds: float = 20.0
    scale_shards: list[int] = field(default_factory=lambda: [10, 100, 1000])
    scale_seconds: float = 60.0
    sink_quota_seconds: float | None = None
    sink_quota_quick: bool = False
    #: connector against a raw SDK loop paced to the same quota (bench/paced.py), record sizes as record_sizes
    paced_shards: list[int] = field(default_factory=lambda: [1, 4, 16, 64])
    paced_seconds: float = 15.0
    #: JVM CPU per record, quotas off (bench/cpu.py): shards of the drained stream, records by record size
    cpu_shards: int = 8
    cpu_records: dict[int, int] = field(default_factory=lambda: {100: 1_000_000, 1024: 200_000})
    cpu_warmup_records: int = 20_000
    #: steady state: a running query's CPU between batch completions, after its first batches (JIT warm-up)
    cpu_steady_records: dict[int, int] = field(default_factory=lambda: {100: 3_000_000, 1024: 400_000})
    cpu_steady_skip_batches: int = 4
    #: a second shape with so many shards that the read quota (which the connector keeps even with quotas off) is
    #: above what the machine reads: the target's shape (0: none), and its steady backlog by record size
    cpu_busy_shards: int = 64
    #: the busy shape's shard count where a record size needs more (the rest use cpu_busy_shards): 64 shards of
    #: 1 KiB records, dealt evenly, let in 125,000 records/s, and the connector read at 0.90-0.92 of that
    cpu_busy_shards_by_size: dict[int, int] = field(default_factory=lambda: {1024: 128})
    cpu_busy_steady_records: dict[int, int] = field(default_factory=lambda: {100: 6_000_000, 1024: 1_000_000})
    #: one wide stream idle then with a record per shard per second (bench/many_shards.py)
    many_shards: int = 1000
    many_idle_seconds: float = 30.0
    many_traffic_seconds: float = 30.0
    #: the second idle window starts this long after the query (0: none), once idle shards are polled less often
    #: (all of them at `maxIdlePollInterval` from about 100 s) and the JIT has compiled the idle path: on 2 cores
    #: its CPU was 1.6-2.3 % of a core 3-4 minutes in, 0.5-0.8 % from 5 minutes on in a probe, 0.9-1.2 % six
    #: minutes in in two bench runs
    many_steady_idle_after: float = 360.0
    #: the second traffic window starts this long after the traffic (0: none), once the JIT has compiled what
    #: records bring (on 2 cores its CPU fell from 0.56 of a core in the first 30 s to 0.12 after three minutes)
    many_steady_traffic_after: float = 180.0
    #: up to 10,000 shards on one driver (bench/shard_scale.py): shapes, the idle window's start (seconds after the
    #: query's) and length, the traffic's length and its unmeasured first seconds
    shard_scale_shards: list[int] = field(default_factory=lambda: [1000, 2500, 5000, 10000])
    shard_scale_idle_after: float = 150.0
    shard_scale_idle_seconds: float = 60.0
    shard_scale_traffic_seconds: float = 60.0
    shard_scale_traffic_warmup: float = 15.0
    #: the most shards in one of a shape's streams: a bigger shape is several streams read by one query
    shard_scale_stream_shards: int = 10000
    #: False when the shapes were picked on the command line: the run is a probe, not the page's headline
    shard_scale_headline: bool = True
    #: every GetRecords answered this much later (the simulator's latency fault; 0: none): an endpoint slower than
    #: a local simulator, as Kinesis' own or a loaded machine's (a probe, like chosen shapes)
    shard_scale_call_latency_ms: int = 0
    #: a backlog drained by a driver with a 1 GiB heap (bench/memory.py): shards x MiB per shard of 10 KiB records
    memory_shards: int = 64
    memory_mib_per_shard: int = 20
    #: a batch read of a backlog larger than fetchBufferSize (bench/batch_read.py): shards x MiB of 16 KiB records
    batch_read_shards: int = 16
    batch_read_mib_per_shard: int = 32
    #: a backlog drained on local-cluster[2,1,1024] (bench/cluster.py); 0 shards skips the section
    cluster_shards: int = 8
    cluster_records: int = 160_000
    #: writers on several executors (bench/sink_cluster.py): local-cluster executor counts (1: the single-executor
    #: rows), shards, write kinds, and seconds per write at the shards' quota
    sink_cluster_executors: list[int] = field(default_factory=lambda: [1, 2, 3])
    sink_cluster_shards: list[int] = field(default_factory=lambda: [4, 16])
    sink_cluster_aggregations: list[str] = field(default_factory=lambda: ["none", "kpl"])
    sink_cluster_keys: list[str] = field(default_factory=lambda: ["uniform", "hot"])
    sink_cluster_modes: list[str] = field(default_factory=lambda: ["batch", "streaming"])
    sink_cluster_seconds: float = 12.0
    #: how long a child Spark driver (memory, cluster) may take before it is killed
    child_timeout_seconds: float = 1200.0

    @classmethod
    def for_mode(cls, mode: str, repetitions: int | None = None) -> Settings:
        if mode == "smoke":
            s = cls(
                mode=mode,
                repetitions=1,
                read_shards=[1],
                record_sizes=[100],
                read_records={100: 400},
                write_records={100: 400},
                write_warmups=1,
                write_repetitions=1,
                boto3_seconds=1.0,
                quota_shards=[1],
                quota_seconds=2.0,
                latency_seconds=2.0,
                latency_rate=50,
                lull_shards=1,
                lull_silence_seconds=1.0,
                lull_count=1,
                sparse_shards=2,
                sparse_settle_seconds=1.0,
                sparse_seconds=2.0,
                fanout_seconds=1.0,
                realtime_rates=[50],
                realtime_modes=["polling"],
                realtime_seconds=2.0,
                scale_shards=[10],
                scale_seconds=2.0,
                aggregation_seconds=0.5,
                aggregation_latency_seconds=4.0,
                sink_quota_quick=True,
                paced_shards=[1],
                paced_seconds=2.0,
                cpu_shards=1,
                cpu_records={100: 2_000},
                cpu_warmup_records=500,
                cpu_steady_records={100: 3_000},
                cpu_steady_skip_batches=0,
                cpu_busy_shards=0,
                cpu_busy_shards_by_size={},
                many_shards=10,
                many_idle_seconds=2.0,
                many_steady_idle_after=0.0,
                many_traffic_seconds=2.0,
                many_steady_traffic_after=2.0,
                shard_scale_shards=[10],
                shard_scale_idle_after=2.0,
                shard_scale_idle_seconds=2.0,
                shard_scale_traffic_seconds=4.0,
                shard_scale_traffic_warmup=1.0,
                shard_scale_stream_shards=5,  # two streams: the path a 20,000-shard shape takes
                memory_shards=4,
                memory_mib_per_shard=1,
                batch_read_shards=2,
                batch_read_mib_per_shard=1,
                cluster_shards=2,
                cluster_records=2_000,
                sink_cluster_executors=[2],
                sink_cluster_shards=[2],
                sink_cluster_aggregations=["none"],
                sink_cluster_keys=["hot"],
                sink_cluster_seconds=2.0,
                child_timeout_seconds=300.0,
            )
        elif mode == "quick":
            s = cls(
                mode=mode,
                repetitions=1,
                read_shards=[1, 4],
                read_records={100: 100_000, 1024: 25_000},
                write_records={100: 100_000, 1024: 30_000},
                write_warmups=1,
                write_repetitions=1,
                boto3_seconds=4.0,
                quota_shards=[2],
                quota_seconds=15.0,
                latency_seconds=10.0,
                lull_silence_seconds=30.0,
                lull_count=3,
                sparse_shards=200,
                sparse_settle_seconds=30.0,
                sparse_seconds=45.0,
                fanout_seconds=8.0,
                realtime_seconds=10.0,
                scale_shards=[10, 100],
                aggregation_seconds=5.0,
                aggregation_latency_seconds=10.0,
                scale_seconds=25.0,
                sink_quota_quick=True,
                paced_shards=[1, 4],
                cpu_shards=4,
                cpu_records={100: 300_000, 1024: 60_000},
                cpu_steady_records={100: 600_000, 1024: 100_000},
                cpu_busy_shards=16,
                cpu_busy_shards_by_size={},
                cpu_busy_steady_records={100: 1_500_000, 1024: 200_000},
                many_shards=100,
                many_idle_seconds=10.0,
                many_steady_idle_after=0.0,
                many_traffic_seconds=15.0,
                many_steady_traffic_after=0.0,
                shard_scale_shards=[200, 1000],
                shard_scale_idle_after=40.0,
                shard_scale_idle_seconds=20.0,
                shard_scale_traffic_seconds=30.0,
                shard_scale_traffic_warmup=10.0,
                memory_shards=8,
                memory_mib_per_shard=4,
                batch_read_shards=4,
                batch_read_mib_per_shard=8,
                cluster_records=40_000,
                sink_cluster_executors=[2],
                sink_cluster_shards=[4],
                sink_cluster_seconds=8.0,
                child_timeout_seconds=600.0,
            )
        else:
            s = cls()
        if repetitions is not None:
            s.repetitions = s.write_repetitions = repetitions
        return s

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: record-size keys become strings."""

        def json_keys(value: Any) -> Any:
            if isinstance(value, dict) and all(isinstance(k, int) for k in value):
                return {str(k): v for k, v in value.items()}
            return value

        return {key: json_keys(value) for key, value in asdict(self).items()}


def wait_for(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    """Polls `condition` until it holds; a benchmark that waits forever is a broken benchmark."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def get_records_renewing(
    client: Any, stream: str, shard_id: str, iterator: str, last_sequence: str | None, limit: int = 10000
) -> tuple[dict[str, Any], str | None]:
    """boto3's GetRecords, as any reader must make it: an iterator that expired (its 5 minutes passed, or the
    simulator's admin API expired it) is renewed from the last sequence number read, or from TRIM_HORIZON when
    none was, and the call made again. Returns the answer and the iterator it was made with."""
    try:
        return client.get_records(ShardIterator=iterator, Limit=limit), iterator
    except client.exceptions.ExpiredIteratorException:
        where: dict[str, str] = (
            {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "StartingSequenceNumber": last_sequence}
            if last_sequence is not None
            else {"ShardIteratorType": "TRIM_HORIZON"}
        )
        renewed = client.get_shard_iterator(StreamName=stream, ShardId=shard_id, **where)["ShardIterator"]
        return client.get_records(ShardIterator=renewed, Limit=limit), renewed


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def boto3_client(endpoint: str, max_pool: int = 32) -> Any:
    """What a Python user writes by hand: boto3 with its standard retries (throttling included)."""
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(
            retries={"max_attempts": 10, "mode": "standard"},
            max_pool_connections=max_pool,
            connect_timeout=5,
            read_timeout=60,
        ),
    )


class Simulator:
    """One simulator for the run: either started here (the bench) or the pytest session's (the smoke test)."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.admin = SimulatorAdmin(endpoint)
        self.client = boto3_client(endpoint)

    def quotas(self, enabled: bool) -> None:
        self.admin.quotas(enabled=enabled, factor=1.0)

    def new_stream(self, shards: int, prefix: str = "bench") -> str:
        name = f"{prefix}-{shards}-{uuid.uuid4().hex[:8]}"
        self.client.create_stream(StreamName=name, ShardCount=shards)
        wait_for(
            lambda: (
                self.client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamStatus"]
                == "ACTIVE"
            ),
            60,
            f"stream {name} to be ACTIVE",
        )
        return name

    def shards(self, stream: str) -> list[dict[str, Any]]:
        """Every shard as ListShards describes it (id, hash key range, ...), all pages."""
        shards: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"StreamName": stream}
        while True:
            page = self.client.list_shards(**kwargs)
            shards.extend(page["Shards"])
            if not page.get("NextToken"):
                return shards
            kwargs = {"NextToken": page["NextToken"]}

    def shard_ids(self, stream: str) -> list[str]:
        return [s["ShardId"] for s in self.shards(stream)]

    def delete(self, stream: str) -> None:
        """Frees the simulator's memory (it keeps every record) before the next shape."""
        self.admin.delete_stream(stream)

    def stream_counters(self, stream: str) -> dict[str, Any]:
        """Per-shard counters summed over the stream's shards, plus its per-operation calls."""
        node = self.admin.counters().get("streams", {}).get(stream, {})
        totals: dict[str, Any] = {}
        for shard in node.get("shards", {}).values():
            for key, value in shard.items():
                totals[key] = totals.get(key, 0) + value
        totals["operations"] = node.get("operations", {})
        return totals


@contextmanager
def own_simulator() -> Iterator[Simulator]:
    """A simulator for the whole run, quotas off, with heap for the prefilled backlogs (the paced-read section
    keeps up to about 3 GiB of records for its 64-shard shapes)."""
    os.environ.setdefault("KINESIS_SIMULATOR_JAVA_OPTS", "-Xmx6g")
    with launched(SimulatorLauncher(), "bench-simulator-", "--quotas", "off") as endpoint:
        yield Simulator(endpoint)


#: progress entries a query keeps (Spark's default 100): a long AvailableNow drain must not drop its early batches
RECENT_PROGRESS = "10000"


def session_builder(master: str = "local[2]", app: str = "spark-kinesis-bench", driver_memory: str = "2g") -> Any:
    """The bench's session settings with the connector jar from the Python package on spark.jars. The driver's
    memory and the master only take effect when this builder starts the JVM (a new process)."""
    from pyspark.sql import SparkSession

    # An editable install (a path hook) mypy cannot follow; with MYPYPATH=python it can.
    from pyspark_kinesis import configure_spark  # type: ignore[import-not-found, unused-ignore]

    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.streaming.numRecentProgressUpdates", RECENT_PROGRESS)
    )
    return configure_spark(builder)


def spark_session(app: str = "spark-kinesis-bench") -> Any:
    """local[2] with the connector jar from the Python package; an existing session (pytest's) is reused."""
    return session_builder(app=app).getOrCreate()


@contextmanager
def sql_conf(spark: Any, key: str, value: str) -> Iterator[None]:
    """A runtime SQL setting for the duration of a block; the previous value (or none) comes back after it."""
    previous = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, previous)


def source_options(endpoint: str, stream: str, **extra: str) -> dict[str, str]:
    return {"streamName": stream, "endpoint": endpoint, "region": REGION, **CREDENTIALS, **extra}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return float("nan")


def _sbt_value(path: str, pattern: str) -> str:
    match = re.search(pattern, (REPO / path).read_text())
    return match.group(1) if match else "unknown"


def _commit() -> str:
    """The code measured: HEAD's short hash, marked when the work tree differs from it (results pages name it)."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes" if dirty else "")


def load() -> dict[str, float]:
    one, five, fifteen = os.getloadavg()
    return {"load1": round(one, 2), "load5": round(five, 2), "load15": round(fifteen, 2)}


def machine(spark: Any | None = None) -> dict[str, Any]:
    """The machine and versions a result was measured on; load is sampled again around each benchmark."""
    info: dict[str, Any] = {
        "cpuCount": os.cpu_count(),
        "cpuModel": _cpu_model(),
        "memoryGiB": _memory_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "connector": _sbt_value("version.sbt", r'version := "([^"]+)"'),
        "awsSdkJava": _sbt_value("project/Dependencies.scala", r'awsSdkVersion = "([^"]+)"'),
        "boto3": boto3.__version__,
        "commit": _commit(),
        **{f"{k}AtStart": v for k, v in load().items()},
    }
    if spark is not None:
        info["spark"] = spark.version
        info["java"] = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    return info


def dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
