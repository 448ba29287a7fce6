"""The demo `make demo` runs: click events written to Kinesis with the sink, read back with the source, and a
windowed count of clicks per page (watermarked on Kinesis' arrival time) printed as it updates.

Locally it starts kinesis-mock itself. Against real AWS, name a region and a stream; credentials come from the
default chain (environment, profile, instance role):

    python examples/clickstream.py --aws --region eu-west-1 --stream spark-kinesis-demo

With `--realtime` the reading query runs in Spark's real-time mode (`trigger(realTime=...)`, Spark 4.1+): tasks
read for the whole batch and each click becomes a row as soon as Kinesis has it; every row carries how many
milliseconds after reaching Kinesis it was read (the console sink prints them once per batch). Real-time mode runs
stateless queries out of the box; aggregations need Spark's allowlist check turned off.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import boto3
from pyspark.sql import SparkSession
from pyspark.sql.functions import (
    array,
    col,
    concat,
    element_at,
    expr,
    from_json,
    lit,
    struct,
    to_json,
    unix_millis,
    window,
)

from pyspark_kinesis import KinesisSinks, KinesisSources, configure_spark

LAUNCHER = Path(__file__).resolve().parents[1] / "localstack" / "kinesis-mock"
PAGES = ["home", "search", "product", "cart", "checkout"]


def ensure_stream(client: Any, stream: str, shards: int) -> None:
    names = client.list_streams().get("StreamNames", [])
    if stream not in names:
        print(f"creating stream {stream} with {shards} shards")
        client.create_stream(StreamName=stream, ShardCount=shards)
    client.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 1})


def progress(name: str, query: Any) -> str:
    p = query.lastProgress
    if not p:
        return f"{name}: starting"
    line = f"{name}: batch {p['batchId']}, {p['numInputRows']} rows in, {p.get('inputRowsPerSecond', 0):.0f} rows/s"
    metrics = p["sources"][0].get("metrics", {}) if p.get("sources") else {}
    if "maxMsBehindLatest" in metrics:
        line += f", {metrics['maxMsBehindLatest']} ms behind the tip"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aws", action="store_true", help="use real AWS (default credential chain)")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--stream", default=f"clicks-{uuid.uuid4().hex[:6]}")
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=40, help="how long to run before stopping")
    parser.add_argument("--rate", type=int, default=50, help="click events per second")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="read in real-time mode: every click printed as it arrives, with its latency",
    )
    parser.add_argument("--batch", default="10 seconds", help="with --realtime: how long one real-time batch runs")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="spark-kinesis-demo-"))
    endpoint = None
    if not args.aws:
        endpoint = (
            subprocess.run(
                [str(LAUNCHER), "start", "--state-dir", str(work / "emulator")],
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        print(f"kinesis-mock is up at {endpoint}")
    try:
        client = (
            boto3.client(
                "kinesis",
                region_name=args.region,
                endpoint_url=endpoint,
                aws_access_key_id="demo",
                aws_secret_access_key="demo",
            )
            if endpoint
            else boto3.client("kinesis", region_name=args.region)
        )
        ensure_stream(client, args.stream, args.shards)

        # Real-time tasks hold their task slots for the whole batch: leave slots for the producer's tasks too.
        spark = configure_spark(
            SparkSession.builder.master("local[4]" if args.realtime else "local[2]")
            .appName("spark-kinesis demo")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.ui.showConsoleProgress", "false")
        ).getOrCreate()
        spark.sparkContext.setLogLevel("WARN")

        def connect(builder: Any) -> Any:
            builder = builder.withRegion(args.region)
            return builder.withEndpoint(endpoint).withCredentials("demo", "demo") if endpoint else builder

        clicks = (
            spark.readStream.format("rate")
            .option("rowsPerSecond", args.rate)
            .load()
            .select(
                concat(lit("user-"), (col("value") % 20).cast("string")).alias("user"),
                element_at(array(*[lit(p) for p in PAGES]), (col("value") % len(PAGES) + 1).cast("int")).alias("page"),
                col("timestamp").alias("clickedAt"),
            )
        )
        producer = (
            connect(KinesisSinks.kinesis(args.stream, col("user"), to_json(struct("user", "page", "clickedAt"))))
            .build(clicks)
            .option("checkpointLocation", str(work / "producer"))
            .queryName("producer")
            .trigger(processingTime="1 second")
            .start()
        )

        events = connect(KinesisSources.kinesis(args.stream)).withInitialPosition("trim_horizon").build(spark)
        clicks_read = events.select(
            from_json(col("data").cast("string"), "user string, page string, clickedAt timestamp").alias("click"),
            col("approximateArrivalTimestamp"),
        )
        if args.realtime:
            # Stateless, so real-time mode runs it as it is. The latency is taken per row inside the task, from
            # Kinesis' arrival time to the JVM's clock (current_timestamp() is fixed per batch: a real-time batch
            # lasts seconds).
            now_ms = expr("cast(reflect('java.lang.System', 'currentTimeMillis') as bigint)")
            consumer = (
                clicks_read.select(
                    col("click.page").alias("page"),
                    col("click.user").alias("user"),
                    (now_ms - unix_millis(col("approximateArrivalTimestamp"))).alias("msAfterKinesis"),
                )
                .writeStream.outputMode("update")
                .format("console")
                .option("truncate", False)
                .option("checkpointLocation", str(work / "consumer"))
                .queryName("clicks in real time")
                .trigger(realTime=args.batch)
                .start()
            )
        else:
            per_page = (
                clicks_read.withWatermark("approximateArrivalTimestamp", "10 seconds")
                .groupBy(window("approximateArrivalTimestamp", "10 seconds"), col("click.page").alias("page"))
                .count()
            )
            consumer = (
                per_page.writeStream.outputMode("update")
                .format("console")
                .option("truncate", False)
                .option("checkpointLocation", str(work / "consumer"))
                .queryName("clicks per page")
                .trigger(processingTime="5 seconds")
                .start()
            )

        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline and producer.isActive and consumer.isActive:
            consumer.awaitTermination(5)  # wakes every 5 s to print progress
            print(progress("producer", producer), "|", progress("consumer", consumer), flush=True)
        failed = producer.exception() or consumer.exception()
        producer.stop()
        consumer.stop()
        spark.stop()
        if failed:
            print(f"demo failed: {failed}", file=sys.stderr)
            return 1
        print("demo finished")
        return 0
    finally:
        if endpoint:
            subprocess.run([str(LAUNCHER), "stop", "--state-dir", str(work / "emulator")], check=False)


if __name__ == "__main__":
    sys.exit(main())
