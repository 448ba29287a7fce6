"""Keeps `make bench` from rotting: the harness in smoke mode (1 shard, a few hundred records, 1 repetition, no
plots) against the session's simulator and Spark session; the memory and local-cluster sections start driver
processes of their own. Checks that every section is there with sane numbers; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.env import Settings, Simulator, spark_session
from bench.run import SECTIONS, run_benchmarks

if TYPE_CHECKING:  # the root conftest.py, which pytest loads itself
    from conftest import SimulatorAdmin


def test_smoke_run_writes_every_section(simulator_admin: SimulatorAdmin, tmp_path: Path) -> None:
    settings = Settings.for_mode("smoke")
    run_benchmarks(
        spark_session(),
        Simulator(simulator_admin.endpoint),
        settings,
        tmp_path,
        plots=False,
        docs_path=tmp_path / "benchmarks.md",
    )
    [json_file] = tmp_path.glob("*.json")
    results = json.loads(json_file.read_text())

    for section in SECTIONS:
        assert section in results and "error" not in results[section], (section, results.get(section))
    assert results["machine"]["cpuCount"] >= 1 and "load1AtStart" in results["machine"]

    [read] = results["read"]["shapes"]
    assert read["connectorRecordsCounted"] == [settings.read_records[100]]
    assert read["rawSdk"]["runs"][0]["records"] == settings.read_records[100]
    assert min(read[k]["recordsPerSecond"] for k in ("connector", "rawSdk", "boto3")) > 0
    assert results["read"]["memory"]["peaks"][0]["heapPeakMiB"] > 0

    [write] = results["write"]["shapes"]
    assert write["connectorRecordsStored"] == [settings.write_records[100]]
    assert write["rawSdk"]["runs"][0]["storedBySimulator"] == settings.write_records[100]
    assert min(write[k]["recordsPerSecond"] for k in ("connector", "rawSdk", "boto3")) > 0
    assert write["sinkCpuMicrosPerRecord"] > 0 and write["rawSdkCpuMicrosPerRecord"] > 0

    lull = results["lull"]
    assert lull["afterLull"]["lulls"] == settings.lull_count and lull["afterLull"]["ms"]["p50"] > 0
    assert lull["sparse"]["records"] >= 1 and lull["sparse"]["ms"]["p50"] > 0

    [quota] = results["readUnderQuota"]["runs"]
    assert quota["getRecordsCalls"] > 0 and 0 <= quota["throttledFraction"] <= 1

    assert results["writeUnderQuota"]["available"] in (True, False)

    cluster_writes = results["sinkCluster"]["rows"]
    assert {r["start"] for r in cluster_writes} == {"shares", "unpaced"}, cluster_writes
    assert all(r["stored"] == r["rows"] for r in cluster_writes if r["mode"] == "batch"), cluster_writes
    assert all(r["stored"] > 0 and r["attempts"] >= r["stored"] for r in cluster_writes), cluster_writes

    for run in results["latency"]["runs"]:
        assert run["recordsArrived"] == run["recordsSent"] > 0
        assert 0 < run["ms"]["p50"] <= run["ms"]["p99"]

    [scale] = results["scale"]["runs"]
    assert scale["shards"] == 10 and scale["traffic"]["listShardsPerMinute"] >= 0

    _check_source_engine_sections(results, settings)

    fan = results["fanOut"]
    assert {(r["mode"], r["name"]) for r in fan["latency"]} == {
        (m, t) for m in ("polling", "efo") for t in ("default", "processingTime=100ms")
    }
    assert all(r["recordsArrived"] == r["recordsSent"] > 0 for r in fan["latency"])
    rt = results["realTime"]
    assert {(r["mode"], r["trigger"]) for r in rt["runs"]} == {
        ("polling", t) for t in ("realTime", "processingTime=100ms")
    }
    assert all(r["recordsArrived"] == r["recordsSent"] > 0 for r in rt["runs"]), rt["runs"]
    agg = results["aggregation"]
    assert [t["mode"] for t in agg["throughput"]] == ["none", "kpl"], agg
    assert all(t["kinesisRecordsStored"] > 0 for t in agg["throughput"])
    # Aggregates carry several user records each; plain records one.
    assert (
        agg["throughput"][0]["userRecordsPerKinesisRecord"] <= 1.0 < agg["throughput"][1]["userRecordsPerKinesisRecord"]
    )
    assert all(lt["measured"] > 0 for lt in agg["latency"]), agg["latency"]
    for mode, readers in fan["throughput"]["modes"].items():
        assert len(readers) == 3 and all(r["bytesPerSecond"] > 0 for r in readers), (mode, readers)

    assert {t["verdict"] for t in results["targets"]} <= {"PASS", "MISS", "NOT RUN"}
    summary = (tmp_path / f"{results['date']}-smoke.md").read_text()
    assert "## Targets" in summary and "Read throughput" in summary
    assert (tmp_path / "benchmarks.md").read_text().startswith("# Benchmarks")


def _check_source_engine_sections(results: dict[str, Any], settings: Settings) -> None:
    """The sections the source read engine is judged by: each ran its smoke shape and measured something."""
    [paced] = results["pacedRead"]["shapes"]
    assert (paced["shards"], paced["recordBytes"]) == (1, 100)
    for reader in ("connector", "pacedSdk"):
        run = paced[reader]["median"]
        assert run["getRecordsCalls"] > 0 and run["mibPerSecond"] > 0, (reader, run)
        assert 0 <= run["throttledFraction"] <= 1 and run["recordsServedSinceStart"] > 0
    assert paced["pacedSdk"]["median"]["loop"]["calls"] > 0 and paced["ratioToPacedSdk"] is not None

    [cpu] = results["cpuPerRecord"]["shapes"]
    for reader in ("connector", "rawSdk"):
        [run] = cpu[reader]["runs"]
        assert run["records"] == settings.cpu_records[100] and run["jvmCpuSeconds"] >= 0, (reader, run)
    assert results["cpuPerRecord"]["backgroundCpuPerSecond"] >= 0
    steady = cpu["connectorSteady"]
    assert 0 < steady["records"] <= settings.cpu_steady_records[100] and steady["batches"] >= 1, steady
    assert steady["jvmCpuSeconds"] >= steady["jitCpuSeconds"] >= 0
    # the raw loop drained the same backlog before and after the query
    assert [r["records"] for r in steady["rawSdkBracket"]["runs"]] == [settings.cpu_steady_records[100]] * 2, steady
    # A smoke read is so short that the raw loop's CPU can be all JIT (then no ratio).
    assert (cpu["steadyRatioWithoutJit"] is not None) == (cpu["rawSdk"]["withoutJitMicrosPerRecord"] > 0), cpu

    many = results["manyShards"]
    assert many["shards"] == settings.many_shards and many["startSeconds"] >= 0
    assert many["idle"]["cpu"]["wallSeconds"] >= settings.many_idle_seconds and many["idle"]["cpu"]["cpuSeconds"] >= 0
    assert many["traffic"]["recordsSent"] > 0 and many["traffic"]["recordsMissing"] == 0, many["traffic"]
    # the traffic flows on into its second window, which measures records of its own
    assert many["trafficSteady"]["measured"] > 0 and many["traffic"]["measured"] > 0, many
    assert many["traffic"]["recordsSent"] >= many["traffic"]["measured"] + many["trafficSteady"]["measured"]

    [wide] = results["shardScale"]["runs"]
    assert (wide["shards"], wide["streams"], wide["activeShards"]) == (10, 2, 2) and wide["startSeconds"] >= 0
    assert wide["idle"]["cpu"]["wallSeconds"] >= settings.shard_scale_idle_seconds and wide["idle"]["triggers"] > 0
    traffic = wide["traffic"]
    assert traffic["recordsSent"] > 0 and traffic["recordsMissing"] == 0 and traffic["batches"] >= 1, traffic
    assert traffic["offsetFileBytes"] > 0 and traffic["walCommitMs"]["n"] == traffic["batches"], traffic
    assert traffic["getRecordsPerSecond"] > 0 and traffic["p50MsBySecondSent"], traffic
    # the executor's calls during the traffic: the busy shards' reads found, each with its slot wait and time
    calls = traffic["callQueue"]
    assert calls["readCallsPerSecond"] > 0 and calls["readWaitMs"] >= 0 and calls["callMs"] > 0, calls
    # a trigger with records runs on the stream thread (the threads' names found in /proc)
    assert traffic["triggerCpuMs"]["stream"] > 0 and traffic["triggerCpuMs"]["triggers"] >= traffic["batches"], traffic
    assert 0 < wide["heapAfterFullGcMiB"] <= wide["heapMaxMiB"] and wide["idleAfterTraffic"]["cpu"]["wallSeconds"] > 0
    # the second query's traffic, triggered at a fixed interval: every record arrives, each trigger's CPU is found
    fixed = wide["fixedTrigger"]
    assert fixed["interval"] == "1 second" and fixed["recordsSent"] > 0 and fixed["recordsMissing"] == 0, fixed
    assert fixed["batches"] >= 1 and fixed["triggerCpuMs"]["stream"] > 0, fixed

    memory = results["memory"]
    assert memory["completed"], memory["child"]
    assert memory["child"]["records"] == memory["recordsInStream"] == memory["storedRecords"] > 0
    assert 0 < memory["child"]["heapPeakMiB"] and memory["child"]["maxHeapMiB"] <= 1100  # the child's 1 GiB heap

    batch = results["batchRead"]
    for planning in ("oneRead", "today"):  # both read the whole stream: at least what it stores
        assert batch["runs"][planning]["servedToStored"] >= 1.0, batch
    assert batch["runs"]["oneRead"]["servedToStored"] <= 1.05, batch

    cluster = results["localCluster"]
    assert cluster["completed"], cluster["child"]
    assert cluster["child"]["records"] == settings.cluster_records
    assert cluster["servedBytes"] >= cluster["storedBytes"] > 0 and cluster["servedToStored"] >= 1.0
