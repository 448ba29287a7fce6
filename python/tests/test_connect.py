"""The builders on a Spark Connect session, against a real Connect server started from PySpark's distribution.

One server for the module: `sbin/start-connect-server.sh` with the connector jar, on 127.0.0.1 and a free port,
its pid and log files in a temporary folder, stopped at the end. The client session is made with Spark Connect's
own builder, as `SparkSession.builder.remote(...)` does (which refuses while the classic session of other test
modules runs in this process), and PySpark's Connect switch (SPARK_CONNECT_MODE_ENABLED) is set only meanwhile.
Every test here runs with py4j made unreachable: on Connect the builders must not touch it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pyspark
import pytest
from pyspark.errors import IllegalArgumentException
from pyspark.sql.functions import col, concat, lit, struct, to_json

import pyspark_kinesis._jvm
from pyspark_kinesis import KinesisSinks, KinesisSources, RetryStrategies, connector_jar

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
IDENT = "pyspark-kinesis-tests"
RECORDS = 40


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout:.0f}s")
        time.sleep(0.2)


def _log_tail(state: Path) -> str:
    logs = sorted(state.glob("*.out"))
    return logs[0].read_text(errors="replace")[-4000:] if logs else "(no server log)"


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server with the connector jar; yields its sc:// URL."""
    state = tmp_path_factory.mktemp("spark-connect")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE")}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_PID_DIR=str(state), SPARK_LOG_DIR=str(state), SPARK_IDENT_STRING=IDENT)
    subprocess.run(
        [
            str(SPARK_HOME / "sbin" / "start-connect-server.sh"),
            "--master",
            "local[2]",
            "--driver-memory",
            "1g",
            "--jars",
            connector_jar(),
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "--conf",
            f"spark.sql.warehouse.dir={state / 'warehouse'}",
        ],
        env=env,
        cwd=state,
        check=True,
        capture_output=True,
        timeout=60,
    )
    pid = int((state / f"spark-{IDENT}-{SERVER_CLASS}-1.pid").read_text().strip())
    try:

        def listening() -> bool:
            if not _alive(pid):
                raise RuntimeError(f"the Spark Connect server exited while starting:\n{_log_tail(state)}")
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        _wait(listening, 240, f"the Spark Connect server did not listen on 127.0.0.1:{port}")
        yield f"sc://127.0.0.1:{port}"
    finally:
        subprocess.run(
            [str(SPARK_HOME / "sbin" / "stop-connect-server.sh")], env=env, cwd=state, timeout=60, capture_output=True
        )
        try:
            _wait(lambda: not _alive(pid), 60, "the Spark Connect server did not stop")
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def connect(connect_server: str) -> Iterator[Any]:
    """A Spark Connect session on the module's server."""
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPARK_CONNECT_MODE_ENABLED", "1")
        session = ConnectSparkSession.builder.remote(connect_server).getOrCreate()
        try:
            yield session
        finally:
            session.stop()


@pytest.fixture(autouse=True)
def no_py4j(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable() -> Any:
        raise AssertionError("pyspark_kinesis used py4j on a Spark Connect session")

    monkeypatch.setattr(pyspark_kinesis._jvm, "jvm", unreachable)


def _with_endpoint(builder: Any, endpoint: str) -> Any:
    return builder.withEndpoint(endpoint).withRegion("us-east-1").withCredentials("test", "test")


def _stream(endpoint: str, shards: int) -> str:
    name = f"connect-{uuid.uuid4().hex[:8]}"
    client = boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    client.create_stream(StreamName=name, ShardCount=shards)
    client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2})
    return name


def test_the_session_is_a_connect_session_and_options_are_computed(connect: Any) -> None:
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

    assert isinstance(connect, ConnectSparkSession)
    builder = (
        KinesisSources.kinesis("clicks")
        .withRegion("eu-west-1")
        .withMaxRecordsPerFetch(500)
        .withRetryStrategy(RetryStrategies.indefinitely(250))
    )
    assert builder.options() == {
        "streamName": "clicks",
        "region": "eu-west-1",
        "maxRecordsPerFetch": "500",
        "retryMaxAttempts": "unlimited",
        "retryInitialBackoff": "250ms",
        "retryMaxBackoff": "250ms",
    }


def test_a_connect_session_made_without_pysparks_switch_is_recognised(
    connect: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark import SparkContext

    monkeypatch.delenv("SPARK_CONNECT_MODE_ENABLED")
    monkeypatch.setattr(SparkContext, "_active_spark_context", None)  # as in a process with no classic session
    builder = KinesisSinks.kinesis("out").withPreserveKeyOrder(True)
    assert builder.options() == {"streamName": "out", "preserveKeyOrder": "true"}


def test_write_with_the_sink_and_read_back_with_the_source(connect: Any, kinesis_endpoint: str, tmp_path: Path) -> None:
    first, second = _stream(kinesis_endpoint, 2), _stream(kinesis_endpoint, 1)
    expected = sorted((f"user-{i % 7}", f'{{"user":"user-{i % 7}","id":{i}}}') for i in range(RECORDS))

    # Batch write, generic form: key and data as Columns.
    events = connect.range(0, RECORDS).select(concat(lit("user-"), (col("id") % 7).cast("string")).alias("user"), "id")
    writer = _with_endpoint(KinesisSinks.kinesis(first, col("user"), to_json(struct("user", "id"))), kinesis_endpoint)
    writer.build(events).save()

    # Streaming copy (AvailableNow): the source's rows go to the sink unchanged.
    source = _with_endpoint(KinesisSources.kinesis(first), kinesis_endpoint).withInitialPosition("trim_horizon")
    stream = source.build(connect)
    assert stream.isStreaming
    query = (
        _with_endpoint(KinesisSinks.kinesis(second), kinesis_endpoint)
        .buildStreaming(stream)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180), "the AvailableNow query did not end"
    assert query.exception() is None

    # Batch read of what the streaming query wrote.
    read = _with_endpoint(KinesisSources.kinesis(second), kinesis_endpoint).withInitialPosition("trim_horizon")
    rows = read.buildBatch(connect).selectExpr("partitionKey", "cast(data as string) as json", "stream").collect()
    assert sorted((r.partitionKey, r.json) for r in rows) == expected
    assert {r.stream for r in rows} == {second}


def test_a_bad_source_option_fails_at_build_with_the_connectors_message(connect: Any) -> None:
    with pytest.raises(
        ValueError,
        match=r"Invalid value '20000' for option 'maxRecordsPerFetch': "
        r"expected an integer in 1\.\.10000\.",
    ):
        KinesisSources.kinesis("s").withMaxRecordsPerFetch(20000).build(connect)


def test_a_bad_sink_option_fails_when_the_write_starts_naming_the_option(connect: Any) -> None:
    df = connect.range(1).selectExpr("'k' as partitionKey", "'d' as data")
    writer = KinesisSinks.kinesis("s").withRegion("us-east-1").withOption("flowControl", "sideways").build(df)
    with pytest.raises(IllegalArgumentException, match=r"Invalid value 'sideways' for option 'flowControl'"):
        writer.save()
