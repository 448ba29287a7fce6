"""Write throughput: the sink (`df.write.format("kinesis")` of a cached, pre-generated DataFrame) against the raw
SDK PutRecords loop (500-record batches) and a boto3 loop, quotas off; each writes to a fresh stream and the
simulator's counters say how many records were really stored. CPU per record for the sink and the raw loop: the
driver JVM's process CPU time over the write (both run in that JVM in local mode; the simulator runs in its own
process), divided by the records written, without the JIT compilers' threads, each measured once the JVM has gone
quiet after the previous contender (a Spark job leaves seconds of compilation and collection behind it). The sink's
figure includes Spark producing the rows and running the job, which the raw loop, handed prepared requests, does
not pay. Before the timed writes of a record size each contender writes `write_warmups` times untimed (both JVMs
compile the write path over the first millions of records: the first 300,000-record writes run at a quarter to
half of the later ones), and the two go first in turn."""

from __future__ import annotations

import time
from typing import Any

from bench.cpu import background_cpu
from bench.env import Settings, Simulator, load, median, source_options
from bench.jvmstats import JitCpu, ProcessCpu
from bench.loops import JvmSdk, Rate, boto3_write, compare, rate_dict

#: threads of the raw loop: the sink keeps 4 requests in flight per task over 2 tasks; the raw loop gets as many
RAW_WRITE_THREADS = 4
KEYS = 1000
#: the JVM counts as quiet below this share of one core, watched over half-second windows, for at most 15 s
QUIET_CORES = 0.1


def generated(spark: Any, records: int, record_bytes: int) -> Any:
    """A cached DataFrame of `records` rows (1000 partition keys, payload of `record_bytes`), materialised now so
    the timed write does not generate it."""
    from pyspark.sql import functions as F

    df = (
        spark.range(0, records, 1, spark.sparkContext.defaultParallelism)
        .select(
            F.concat(F.lit("key-"), (F.col("id") % KEYS).cast("string")).alias("partitionKey"),
            F.expr(f"cast(repeat('x', {record_bytes}) as binary)").alias("data"),
        )
        .cache()
    )
    df.count()
    return df


def sink_write(df: Any, endpoint: str, stream: str) -> float:
    start = time.perf_counter()
    df.write.format("kinesis").mode("append").options(**source_options(endpoint, stream)).save()
    return time.perf_counter() - start


def _settle(cpu: ProcessCpu, timeout: float = 15.0) -> None:
    """Waits until the driver JVM uses under QUIET_CORES of a core (or the timeout passes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and background_cpu(cpu, 0.5) >= QUIET_CORES:
        pass


class _CpuMeter:
    """The JVM's CPU time without its JIT compilers' threads."""

    def __init__(self, spark: Any) -> None:
        self.cpu, self.jit = ProcessCpu(spark), JitCpu(spark)

    def seconds(self) -> float:
        return self.cpu.seconds() - self.jit.seconds()


def _rate_dict(rate: Rate, stored: int, cpu_seconds: float | None = None) -> dict[str, Any]:
    cpu = (
        {}
        if cpu_seconds is None or not rate.records
        else {"cpuMicrosPerRecord": round(cpu_seconds * 1e6 / rate.records, 3)}
    )
    return {**rate_dict(rate), "storedBySimulator": stored, **cpu}


def run(spark: Any, sim: Simulator, settings: Settings) -> dict[str, Any]:
    sdk = JvmSdk(spark, sim.endpoint)
    cpu = _CpuMeter(spark)
    shapes = []
    try:
        sim.quotas(False)
        for record_bytes in settings.record_sizes:
            records = settings.write_records[record_bytes]
            df = generated(spark, records, record_bytes)
            _warm_up(sim, sdk, df, records, record_bytes, settings)
            for shards in settings.read_shards:
                reps: dict[str, list[dict[str, Any]]] = {"connector": [], "rawSdk": [], "boto3": []}
                for rep in range(settings.write_repetitions):
                    # Alternating who goes first: whatever one contender leaves behind (a collection, compilation
                    # still going on) falls on each in turn.
                    order = ("connector", "rawSdk") if rep % 2 == 0 else ("rawSdk", "connector")
                    for contender in order:
                        reps[contender].append(_timed(contender, df, sim, sdk, cpu, shards, records, record_bytes))
                    stream = sim.new_stream(shards, "bench-write")
                    rate = boto3_write(sim.client, stream, records, record_bytes, settings.boto3_seconds)
                    reps["boto3"].append(
                        {**_rate_dict(rate, int(sim.stream_counters(stream).get("putRecords", 0))), **load()}
                    )
                    sim.delete(stream)
                shapes.append(_shape(record_bytes, shards, records, reps))
                print(
                    f"  write {record_bytes} B x {shards} shard(s): sink "
                    f"{shapes[-1]['connector']['recordsPerSecond']:,.0f} rec/s, raw SDK "
                    f"{shapes[-1]['rawSdk']['recordsPerSecond']:,.0f}, boto3 "
                    f"{shapes[-1]['boto3']['recordsPerSecond']:,.0f}",
                    flush=True,
                )
            df.unpersist()
    finally:
        sdk.close()
    return {
        "shapes": shapes,
        "rawWriteThreads": RAW_WRITE_THREADS,
        "warmupWrites": settings.write_warmups,
        "repetitions": settings.write_repetitions,
        "order": "sink and raw loop alternate going first, one repetition each",
    }


def _warm_up(sim: Simulator, sdk: JvmSdk, df: Any, records: int, record_bytes: int, settings: Settings) -> None:
    """Untimed writes of the shape's size by both contenders, to the widest stream of the section."""
    shards = max(settings.read_shards)
    for _ in range(settings.write_warmups):
        for contender in ("connector", "rawSdk"):
            stream = sim.new_stream(shards, "bench-write-warmup")
            if contender == "connector":
                sink_write(df, sim.endpoint, stream)
            else:
                sdk.write(stream, records, record_bytes, threads=RAW_WRITE_THREADS)
            sim.delete(stream)


def _timed(
    contender: str, df: Any, sim: Simulator, sdk: JvmSdk, cpu: _CpuMeter, shards: int, records: int, record_bytes: int
) -> dict[str, Any]:
    """One timed write to a fresh stream, started on a quiet JVM; the simulator's counters say what was stored."""
    loads = load()
    stream = sim.new_stream(shards, "bench-write")
    _settle(cpu.cpu)
    before = cpu.seconds()
    raw: Rate | None = None
    if contender == "connector":
        seconds = sink_write(df, sim.endpoint, stream)
    else:
        raw = sdk.write(stream, records, record_bytes, threads=RAW_WRITE_THREADS)
        seconds = raw.seconds
    used = cpu.seconds() - before
    stored = int(sim.stream_counters(stream).get("putRecords", 0))
    sim.delete(stream)
    # The sink's rate is what the simulator stored over the write's time; the raw loop counts its own.
    rate = raw or Rate(stored, seconds, record_bytes)
    return {**_rate_dict(rate, stored, used), **loads}


def _shape(record_bytes: int, shards: int, records: int, reps: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    sink_cpu = _median_cpu(reps["connector"])
    raw_cpu = _median_cpu(reps["rawSdk"])
    return {
        "recordBytes": record_bytes,
        "shards": shards,
        "recordsWritten": records,
        **compare(reps),
        "connectorRecordsStored": [r["storedBySimulator"] for r in reps["connector"]],
        "sinkCpuMicrosPerRecord": sink_cpu,
        "rawSdkCpuMicrosPerRecord": raw_cpu,
        "cpuRatioToRawSdk": round(sink_cpu / raw_cpu, 3) if sink_cpu and raw_cpu else None,
    }


def _median_cpu(runs: list[dict[str, Any]]) -> float | None:
    values = [r["cpuMicrosPerRecord"] for r in runs if "cpuMicrosPerRecord" in r]
    return round(median(values), 3) if values else None
