"""Write throughput: the sink (`df.write.format("kinesis")` of a cached, pre-generated DataFrame) against the raw
SDK PutRecords loop (500-record batches) and a boto3 loop, quotas off; each writes to a fresh stream and the
simulator's counters say how many records were really stored."""

from __future__ import annotations

import time
from typing import Any

from bench.env import Settings, Simulator, load, source_options
from bench.loops import JvmSdk, Rate, boto3_write, compare, rate_dict

#: threads of the raw loop: the sink keeps 4 requests in flight per task over 2 tasks; the raw loop gets as many
RAW_WRITE_THREADS = 4
KEYS = 1000


def generated(spark: Any, records: int, record_bytes: int) -> Any:
    """A cached DataFrame of `records` rows (1000 partition keys, payload of `record_bytes`), materialised now so
    the timed write does not generate it."""
    from pyspark.sql import functions as F

    df = spark.range(0, records, 1, spark.sparkContext.defaultParallelism).select(
        F.concat(F.lit("key-"), (F.col("id") % KEYS).cast("string")).alias("partitionKey"),
        F.expr(f"cast(repeat('x', {record_bytes}) as binary)").alias("data"),
    ).cache()
    df.count()
    return df


def sink_write(df: Any, endpoint: str, stream: str) -> float:
    start = time.perf_counter()
    df.write.format("kinesis").mode("append").options(**source_options(endpoint, stream)).save()
    return time.perf_counter() - start


def _rate_dict(rate: Rate, stored: int) -> dict[str, Any]:
    return {**rate_dict(rate), "storedBySimulator": stored}


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sdk = JvmSdk(spark, sim.endpoint)
    shapes = []
    try:
        sim.quotas(False)
        for record_bytes in settings.record_sizes:
            records = settings.write_records[record_bytes]
            df = generated(spark, records, record_bytes)
            for shards in settings.read_shards:
                reps: dict[str, list[dict[str, Any]]] = {"connector": [], "rawSdk": [], "boto3": []}
                for _ in range(settings.repetitions):
                    loads = load()
                    stream = sim.new_stream(shards, "bench-write")
                    seconds = sink_write(df, sim.endpoint, stream)
                    stored = int(sim.stream_counters(stream).get("putRecords", 0))
                    reps["connector"].append({**_rate_dict(Rate(stored, seconds, record_bytes), stored), **loads})
                    sim.delete(stream)

                    stream = sim.new_stream(shards, "bench-write")
                    rate = sdk.write(stream, records, record_bytes, threads=RAW_WRITE_THREADS)
                    reps["rawSdk"].append({**_rate_dict(rate, int(sim.stream_counters(stream).get("putRecords", 0))),
                                           **load()})
                    sim.delete(stream)

                    stream = sim.new_stream(shards, "bench-write")
                    rate = boto3_write(sim.client, stream, records, record_bytes, settings.boto3_seconds)
                    reps["boto3"].append({**_rate_dict(rate, int(sim.stream_counters(stream).get("putRecords", 0))),
                                          **load()})
                    sim.delete(stream)
                shapes.append(_shape(record_bytes, shards, records, reps))
                print(f"  write {record_bytes} B x {shards} shard(s): sink "
                      f"{shapes[-1]['connector']['recordsPerSecond']:,.0f} rec/s, raw SDK "
                      f"{shapes[-1]['rawSdk']['recordsPerSecond']:,.0f}, boto3 "
                      f"{shapes[-1]['boto3']['recordsPerSecond']:,.0f}", flush=True)
            df.unpersist()
    finally:
        sdk.close()
    return {"shapes": shapes, "rawWriteThreads": RAW_WRITE_THREADS}


def _shape(record_bytes: int, shards: int, records: int, reps: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"recordBytes": record_bytes, "shards": shards, "recordsWritten": records, **compare(reps),
            "connectorRecordsStored": [r["storedBySimulator"] for r in reps["connector"]]}
