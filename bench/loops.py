"""The two baselines the connector is measured against, over the same shards:

* the raw AWS SDK for Java v2 (the practical limit): the SDK classes the connector jar carries (relocated, the same
  version, Apache HttpClient 5, CBOR on the wire), driven from Python through py4j inside the Spark driver JVM.
  Each API call costs a few py4j round trips (not measured here; typically tens to hundreds of microseconds)
  against calls that move 500 to 10,000 records, and the write loop's requests are built once, so the loop
  measures mostly the SDK's calls; what py4j costs makes the baseline slightly lower, never higher;
* boto3 (what a Python user writes by hand): plain loops, single-threaded, as a user would first write them.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import reduce
from typing import Any

from bench.env import REGION, get_records_renewing, median

SHADED_SDK = "io.github.sparkkinesis.shaded.software.amazon.awssdk"
BATCH = 500
FETCH_LIMIT = 10_000
#: every partition key the raw writer sends has this many characters ("key-SS-III"), so a record's size as Kinesis
#: counts it against the quotas (data + partition key) is known without looking at the record
KEY_CHARS = 10


def partition_key(salt: int, index: int) -> str:
    """A fixed-width key: `salt` < 100 and `index` < 1000 (requests hold at most 500 records)."""
    return f"key-{salt:02d}-{index:03d}"


def spread_hash_key(index: int, shards: int) -> str:
    """The middle of hash-key range `index % shards` of a stream whose `shards` shards split [0, 2^128) evenly (as
    CreateStream does)."""
    return str(((2 * (index % shards) + 1) << 128) // (2 * shards))


def quota_bytes_per_record(record_bytes: int) -> int:
    """What one record written by `JvmSdk.write` counts against a shard's read quota: payload + partition key."""
    return record_bytes + KEY_CHARS


@dataclass
class Rate:
    """Records moved in a measured time; bytes are payload bytes (records x record size) for every contender."""

    records: int
    seconds: float
    record_bytes: int

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def mib_per_second(self) -> float:
        return self.records_per_second * self.record_bytes / 1024 / 1024


def rate_dict(rate: Rate) -> dict[str, Any]:
    return {
        "records": rate.records,
        "seconds": round(rate.seconds, 3),
        "recordsPerSecond": round(rate.records_per_second, 1),
        "mibPerSecond": round(rate.mib_per_second, 2),
    }


def compare(reps: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The contenders' repetitions ("connector", "rawSdk", "boto3") as medians, and the connector's ratio to the
    raw SDK loop: the figure the targets are about."""
    out: dict[str, Any] = {
        name: {
            "recordsPerSecond": round(median([r["recordsPerSecond"] for r in runs]), 1),
            "mibPerSecond": round(median([r["mibPerSecond"] for r in runs]), 2),
            "runs": runs,
        }
        for name, runs in reps.items()
    }
    raw = out["rawSdk"]["recordsPerSecond"]
    out["ratioToRawSdk"] = round(out["connector"]["recordsPerSecond"] / raw, 3) if raw else None
    return out


def _jclass(jvm: Any, name: str) -> Any:
    return reduce(getattr, name.split("."), jvm)


class JvmSdk:
    """A raw SDK v2 Kinesis client in the driver JVM."""

    def __init__(self, spark: Any, endpoint: str) -> None:
        self.jvm = spark.sparkContext._jvm
        self._classes: dict[str, Any] = {}
        sdk = self.sdk
        credentials = sdk("auth.credentials.StaticCredentialsProvider").create(
            sdk("auth.credentials.AwsBasicCredentials").create("test", "test")
        )
        # builder().build() is an interface default method py4j cannot see; create() has 50 connections
        http = sdk("http.apache5.Apache5HttpClient").create()
        self.client = (
            sdk("services.kinesis.KinesisClient")
            .builder()
            .endpointOverride(self.jvm.java.net.URI.create(endpoint))
            .region(sdk("regions.Region").of(REGION))
            .credentialsProvider(credentials)
            .httpClient(http)
            .build()
        )
        # The first call loads and JIT-compiles the SDK's request path; no measured loop should pay for it.
        self.client.listStreams()

    def sdk(self, name: str) -> Any:
        """A class of the relocated SDK, e.g. sdk("core.SdkBytes"). Cached: resolving a dotted name through py4j
        costs a round trip per package segment, which a loop must not pay on every call."""
        if name not in self._classes:
            self._classes[name] = _jclass(self.jvm, f"{SHADED_SDK}.{name}")
        return self._classes[name]

    def model(self, name: str) -> Any:
        return self.sdk(f"services.kinesis.model.{name}")

    def close(self) -> None:
        self.client.close()

    # --- writing -------------------------------------------------------------------------------------------------
    def _request(self, stream: str, count: int, record_bytes: int, salt: int, even_over: int = 0) -> Any:
        data = self.sdk("core.SdkBytes").fromByteArray(bytearray(b"x" * record_bytes))
        entries = self.jvm.java.util.ArrayList()
        entry = self.model("PutRecordsRequestEntry")
        for i in range(count):
            record = entry.builder().partitionKey(partition_key(salt, i)).data(data)
            if even_over:
                record = record.explicitHashKey(spread_hash_key(salt * BATCH + i, even_over))
            entries.add(record.build())
        return self.model("PutRecordsRequest").builder().streamName(stream).records(entries).build()

    def write(self, stream: str, records: int, record_bytes: int, threads: int = 2, even_over: int = 0) -> Rate:
        """PutRecords of 500 records from `threads` threads until `records` were stored; requests built up front.
        `even_over` (a stream's shard count): records dealt round-robin over that many equal hash-key ranges instead
        of hashed from the writer's 1,000 partition keys, which leave 64 shards holding from 8 to 25 keys' worth."""
        full = [self._request(stream, BATCH, record_bytes, salt, even_over) for salt in range(2)]
        remainder = records % BATCH
        tail = self._request(stream, remainder, record_bytes, 99, even_over) if remainder else None
        batches = list(range(records // BATCH))
        lock = threading.Lock()
        stored = [0]

        def send(request: Any, size: int) -> None:
            while True:  # quotas are off; a failed record would be resent by sending its batch again
                failed = int(self.client.putRecords(request).failedRecordCount())
                with lock:
                    stored[0] += size - failed
                if failed == 0:
                    return

        def worker(_: int) -> None:
            while True:
                with lock:
                    if not batches:
                        return
                    b = batches.pop()
                send(full[b % 2], BATCH)

        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(worker, range(threads)))
        if tail is not None:
            send(tail, remainder)
        return Rate(stored[0], time.perf_counter() - start, record_bytes)

    # --- reading -------------------------------------------------------------------------------------------------
    def trim_horizon_iterator(self, stream: str, shard_id: str) -> Any:
        request = (
            self.model("GetShardIteratorRequest")
            .builder()
            .streamName(stream)
            .shardId(shard_id)
            .shardIteratorType("TRIM_HORIZON")
            .build()
        )
        return self.client.getShardIterator(request).shardIterator()

    def get_records(self, iterator: Any) -> Any:
        """One GetRecords of up to 10,000 records: about ten py4j round trips with the caller's reading of the
        response, whatever the number of records it carries."""
        return self.client.getRecords(
            self.model("GetRecordsRequest").builder().shardIterator(iterator).limit(FETCH_LIMIT).build()
        )

    def drain(self, stream: str, shard_ids: list[str], record_bytes: int, threads: int = 4) -> Rate:
        """GetRecords (Limit 10,000) over every shard from TRIM_HORIZON to the tip, shards spread over threads."""
        counts = [0] * len(shard_ids)

        def read(index: int) -> None:
            iterator = self.trim_horizon_iterator(stream, shard_ids[index])
            while iterator is not None:
                response = self.get_records(iterator)
                n = int(response.records().size())
                counts[index] += n
                if n == 0 and int(response.millisBehindLatest()) == 0:
                    return
                iterator = response.nextShardIterator()

        start = time.perf_counter()
        with ThreadPoolExecutor(max(1, min(threads, len(shard_ids)))) as pool:
            list(pool.map(read, range(len(shard_ids))))
        return Rate(sum(counts), time.perf_counter() - start, record_bytes)


# --- boto3 -----------------------------------------------------------------------------------------------------------
def boto3_drain(client: Any, stream: str, shard_ids: list[str], record_bytes: int, max_seconds: float) -> Rate:
    """The hand-written loop: shard after shard, GetRecords until the tip, stopped after `max_seconds`."""
    records = 0
    start = time.perf_counter()
    deadline = start + max_seconds
    for shard in shard_ids:
        iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON")[
            "ShardIterator"
        ]
        last: str | None = None
        while iterator and time.perf_counter() < deadline:
            response, _ = get_records_renewing(client, stream, shard, iterator, last, FETCH_LIMIT)
            records += len(response["Records"])
            if response["Records"]:
                last = response["Records"][-1]["SequenceNumber"]
            if not response["Records"] and response.get("MillisBehindLatest", 0) == 0:
                break
            iterator = response.get("NextShardIterator")
    return Rate(records, time.perf_counter() - start, record_bytes)


def boto3_write(client: Any, stream: str, records: int, record_bytes: int, max_seconds: float) -> Rate:
    """The hand-written loop: put_records of 500 records, resending what failed, stopped after `max_seconds`."""
    payload = b"x" * record_bytes
    batch = [{"PartitionKey": f"key-{i}", "Data": payload} for i in range(BATCH)]
    stored = 0
    start = time.perf_counter()
    deadline = start + max_seconds
    while stored < records and time.perf_counter() < deadline:
        entries = batch[: min(BATCH, records - stored)]
        while entries:
            response = client.put_records(StreamName=stream, Records=entries)
            entries = [e for e, r in zip(entries, response["Records"]) if "ErrorCode" in r]
            stored += len(response["Records"]) - len(entries)
    return Rate(stored, time.perf_counter() - start, record_bytes)
