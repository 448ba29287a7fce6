"""`make soak` (python -m soak.run): one seeded chaos run per reader mode, its checks, a summary.

    python -m soak.run [--seed S] [--minutes M | --seconds S] [--modes polling,efo,pipeline,pipeline-kpl]
                       [--menu full|short]
                       [--rate R] [--gap-min S] [--gap-max S] [--warmup S] [--keep] [--out DIR]

Per mode, on a simulator of its own: a stream of 4 shards; the producer (soak/producer.py) starts; the driver
(soak/driver.py) starts its query; once it runs, the chaos phase runs the seeded plan
(soak/plan.py, soak/chaos.py) for the given time while the driver is watched (an exit the harness did not cause is
a failure) and sampled (heap after GC, threads, fds); then everything is calmed, the producer stops and resends
until all it generated is acknowledged, the independent reader (soak/reader.py) reads the whole stream, the query
is given until the sink holds every record the stream holds (or the run fails), sampled once more and stopped, and
the checks (soak/checks.py, soak/resources.py) run.

The pipeline modes (`pipeline`, `pipeline-kpl`) read stream A with the source (polling) and write every row to a
stream B with the connector's sink (`aggregation=kpl` in the second); the chaos works on both streams (storms on
both, splits and merges on B twice as often as on A), the independent reader reads B too (soak/pipeline_reader.py)
and the checks compare A with B (soak/pipeline_checks.py). The summary is printed and written with the timeline to
soak/results/; the work folder (checkpoint, sink, driver logs, simulator log, the producer's ledger) is kept under
soak/results/tmp/ when a check failed or with --keep. Exit code 1 when any check failed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from soak import plan as P
from soak.chaos import ChaosLoop, FaultBoard, shard_count
from soak.checks import Check, evaluate
from soak.driver import DriverSupervisor
from soak.env import RESULTS, SimulatorAdmin, kinesis_client, private_spark_home, simulator, snapshot_jars, wait_for
from soak.pipeline_checks import evaluate_pipeline
from soak.pipeline_reader import StreamTail
from soak.producer import Producer
from soak.reader import ShardInfo, lineage_order, read_stream
from soak.resources import Bounds, baseline, leak_check
from soak.sink import SinkReader

MODES = ("polling", "efo")
#: A -> source -> sink -> B, plain and with KPL aggregation
PIPELINE_MODES = ("pipeline", "pipeline-kpl")


@dataclass
class SoakSettings:
    seed: int
    seconds: float
    modes: tuple[str, ...] = MODES
    menu: str = "full"
    #: records per second over `keys` keys, to a stream of `shards` shards
    rate: float = 100.0
    keys: int = 30
    shards: int = 4
    gap_min: float = 3.0
    gap_max: float = 7.0
    driver_window: float = 0.6
    #: the driver's warm-up before its baseline sample; samples every `sample_every` s
    warmup: float = 30.0
    sample_every: float = 10.0
    #: how long the sink may take to hold the whole stream once the producer stopped
    catchup_timeout: float = 180.0
    drain_timeout: float = 60.0
    trigger: str = "1 second"
    bounds: Bounds = field(default_factory=Bounds)
    out: Path = RESULTS
    keep_work: bool = False

    def plan_settings(self) -> P.PlanSettings:
        return P.PlanSettings(self.seconds, self.menu, self.gap_min, self.gap_max, self.driver_window)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["out"] = str(self.out)
        return out


class Log:
    """Lines to stdout with the run's elapsed time, also kept in the work folder."""

    def __init__(self, path: Path) -> None:
        self.started = time.monotonic()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a")

    def __call__(self, line: str) -> None:
        text = f"[soak {time.monotonic() - self.started:7.1f}s] {line}"
        print(text, flush=True)
        self._file.write(text + "\n")
        self._file.flush()


def _create_stream(client: Any, stream: str, shards: int) -> None:
    client.create_stream(StreamName=stream, ShardCount=shards)
    if not wait_for(
        lambda: (
            client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamStatus"] == "ACTIVE"
        ),
        60,
    ):
        raise RuntimeError(f"stream {stream} not ACTIVE after 60 s")


def run_mode(settings: SoakSettings, mode: str, work: Path, jars: tuple[Path, Path], log: Log) -> dict[str, Any]:
    """One reader mode's run; its summary (checks included)."""
    faults = P.plan(settings.seed, mode, settings.plan_settings())
    log(f"=== mode {mode}: seed {settings.seed}, {settings.seconds:.0f} s of chaos, {len(faults)} faults planned:")
    for f in faults:
        log(f"  plan +{f.at:6.1f}s #{f.index} {f.kind} {f.params}")
    work.mkdir(parents=True, exist_ok=True)
    stream = f"soak-{mode}-{settings.seed}"
    pipeline = mode in PIPELINE_MODES
    stream_b = f"{stream}-b" if pipeline else None
    checks: list[Check] = []
    harness_errors: list[str] = []
    samples: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"mode": mode, "stream": stream, "plan": [f.as_dict() for f in faults]}
    simulator_jar, connector_jar = jars
    with simulator(work / "simulator", simulator_jar) as endpoint:
        admin = SimulatorAdmin(endpoint)
        client = kinesis_client(endpoint)
        _create_stream(client, stream, settings.shards)
        if stream_b is not None:
            _create_stream(client, stream_b, settings.shards)
        producer = Producer(
            endpoint,
            stream,
            settings.rate,
            settings.keys,
            f"s{settings.seed}-{mode}",
            settings.seed,
            work / "acknowledged.jsonl",
        )
        supervisor = DriverSupervisor(
            work,
            endpoint,
            stream,
            "polling" if pipeline else mode,
            str(connector_jar),
            private_spark_home(work),
            settings.trigger,
            sink_stream=stream_b,
            aggregation="kpl" if mode == "pipeline-kpl" else "none",
        )
        sink = SinkReader(supervisor.sink)
        tail = StreamTail(kinesis_client(endpoint), stream_b) if stream_b is not None else None
        board = FaultBoard(admin, (stream, stream_b) if stream_b is not None else stream, settings.seed)
        chaos = ChaosLoop(
            faults,
            settings.seconds,
            admin,
            client,
            stream,
            supervisor,
            board,
            log,
            reshard_streams=(stream_b, stream, stream_b) if stream_b is not None else (),
        )
        caught_up = False
        try:
            producer.start()
            supervisor.start()
            log(f"producer at {settings.rate:.0f} records/s over {settings.keys} keys; driver 1 starting")
            if not supervisor.wait_ready():
                raise RuntimeError("the first driver did not start its query")
            log(f"query started: chaos for {settings.seconds:.0f} s")
            chaos.start()
            _watch(lambda: chaos.is_alive(), supervisor, sink, producer, samples, settings, log, client, stream)
            if chaos.error is not None:
                harness_errors.append(f"chaos loop: {type(chaos.error).__name__}: {chaos.error}")
            log("chaos over, simulator calmed; producer stopping and resending what is pending")
            producer.stop()
            drained = producer.drain(settings.drain_timeout)
            if producer.error is not None:
                harness_errors.append(f"producer: {type(producer.error).__name__}: {producer.error}")
            if not drained:
                harness_errors.append(
                    f"producer: {producer.pending_count()} records still unacknowledged after "
                    f"{settings.drain_timeout:.0f} s of calm"
                )
            if not supervisor.wait_ready():
                raise RuntimeError("no driver running its query after the chaos phase")
            shards, records = read_stream(client, stream)
            stored = {r.position for rs in records.values() for r in rs}
            log(f"independent reader: {len(stored)} records in {len(shards)} shards; waiting for the sink")
            deadline = time.monotonic() + settings.catchup_timeout

            def delivered() -> set[Any]:
                if tail is not None:
                    tail.refresh()
                    return tail.sources()
                sink.refresh()
                return sink.positions()

            def sink_holds_stream() -> bool:
                return stored <= delivered() or time.monotonic() > deadline

            _watch(lambda: not sink_holds_stream(), supervisor, sink, producer, samples, settings, log, client, stream)
            caught_up = stored <= delivered()
            if not caught_up:
                log(f"the sink did not catch up within {settings.catchup_timeout:.0f} s")
            last = supervisor.current
            assert last is not None
            if last.ready is not None and not any(
                s["incarnation"] == last.number and s["sinceReady"] >= settings.warmup for s in samples
            ):
                # A driver started late in the phase: its warm-up level first, then the end (a short stretch).
                time.sleep(max(0.0, last.ready + settings.warmup - time.monotonic()))
                if (sample := supervisor.measure()) is not None:
                    samples.append(sample)
            end = supervisor.measure()
            start = baseline(samples, last.number, settings.warmup)
            log("stopping the query")
            stopped = supervisor.stop_gracefully()
            if tail is not None:
                tail.refresh()
                order = lineage_order([ShardInfo(i, parents, False) for i, parents in tail.lineage()])
                put_faults = (
                    admin.counters().get("streams", {}).get(stream_b, {}).get("operations", {}).get("PutRecords", {})
                ).get("faults", 0)
                data_checks, figures = evaluate_pipeline(
                    producer.acknowledged(), records, tail.copies(order), tail.misplaced, put_faults
                )
                closed_b, all_b = tail.shard_counts()
                figures |= {"shards": len(shards), "shardsB": all_b, "closedShardsB": closed_b}
            else:
                sink.refresh()
                data_checks, figures = evaluate(stream, producer.acknowledged(), shards, records, sink.rows())
            checks.extend(data_checks)
            checks.append(
                Check(
                    "the sink caught up after the producer stopped",
                    caught_up,
                    f"within {settings.catchup_timeout:.0f} s"
                    if caught_up
                    else f"not within {settings.catchup_timeout:.0f} s",
                )
            )
            mismatches = [p.name for p in sink.replay_mismatches()]
            if not pipeline:
                checks.append(
                    Check(
                        "a replayed batch writes the same rows (deterministic replay)",
                        not mismatches,
                        "no batch rewritten with other rows"
                        if not mismatches
                        else f"{len(mismatches)} batches rewritten with other rows",
                        mismatches,
                    )
                )
            failures = supervisor.failures
            checks.append(
                Check(
                    "no query failure the chaos did not cause",
                    not failures,
                    f"{len(supervisor.incarnations)} drivers, each ended by the harness"
                    if not failures
                    else f"{len(failures)} unplanned failures",
                    failures,
                )
            )
            checks.append(leak_check(start, end, settings.bounds))
            summary |= {
                "figures": figures,
                "producer": producer.stats.as_dict(),
                "resources": {"start": start, "end": end, "bounds": asdict(settings.bounds), "samples": samples},
                "finalStop": stopped,
            }
        except Exception as e:  # noqa: BLE001 - the run's own failure is a failed check with its reason
            harness_errors.append(f"{type(e).__name__}: {e}")
            log(f"run aborted: {type(e).__name__}: {e}")
        finally:
            chaos.abort()
            if chaos.is_alive():
                chaos.join(60)
            producer.stop()
            if producer.is_alive():
                producer.drain(0)
            supervisor.shutdown()
        checks.append(
            Check(
                "the harness ran to the end",
                not harness_errors,
                "no harness error" if not harness_errors else "; ".join(harness_errors),
                harness_errors,
            )
        )
        try:
            counters = admin.counters().get("operations", {})
        except Exception:  # noqa: BLE001 - the simulator may be what failed
            counters = {}
    kinds = Counter(e["kind"] for e in chaos.timeline)
    skipped = Counter(e["kind"] for e in chaos.timeline if "skipped" in e["outcome"] or "error" in e["outcome"])
    progress = supervisor.progress()
    summary |= {
        "passed": all(c.passed for c in checks),
        "checks": [c.as_dict() for c in checks],
        "faultsInjected": dict(sorted(kinds.items())),
        "faultsSkippedOrFailed": dict(sorted(skipped.items())),
        "drivers": supervisor.summary(),
        "batches": sink.batches(),
        "progressBatchesWithRows": len(
            {(p["incarnation"], p["batchId"]) for p in progress if (p.get("numInputRows") or 0) > 0}
        ),
        "simulatorFaultsFired": {op: c.get("faults", 0) for op, c in counters.items() if c.get("faults")},
        "simulatorThrottled": {op: c.get("throttled", 0) for op, c in counters.items() if c.get("throttled")},
        "timeline": chaos.timeline,
    }
    return summary


def _watch(
    busy: Callable[[], bool],
    supervisor: DriverSupervisor,
    sink: SinkReader,
    producer: Producer,
    samples: list[dict[str, Any]],
    settings: SoakSettings,
    log: Log,
    client: Any,
    stream: str,
) -> None:
    """While `busy()`: unplanned driver exits noticed (and the driver restarted), the driver sampled, a status line
    every 10 s."""
    next_sample = next_status = time.monotonic()
    while busy():
        if not producer.is_alive() and producer.error is not None:
            raise RuntimeError(f"the producer died: {type(producer.error).__name__}: {producer.error}")
        failure = supervisor.check()
        if failure is not None:
            log(
                f"UNPLANNED: driver {failure['incarnation']} ended (exit {failure['exitCode']}): "
                f"{(failure.get('exit') or {}).get('exception') or (failure['logTail'][-1:] or ['?'])[0]}"
            )
        now = time.monotonic()
        if now >= next_sample:
            next_sample = now + settings.sample_every
            if (sample := supervisor.measure()) is not None:
                samples.append(sample)
        if now >= next_status:
            next_status = now + 10
            sink.refresh()
            inc = supervisor.current
            try:
                open_shards, all_shards = shard_count(client, stream)
            except Exception:  # noqa: BLE001 - a status line is best effort during a storm
                open_shards = all_shards = -1
            # The pipeline modes' sink is stream B, read once the chaos is over (soak/pipeline_reader.py).
            in_sink = f"{len(sink.ids())} ids / {sink.batches()} batches" if sink.folder.is_dir() else "(stream B)"
            log(
                f"status: generated {producer.stats.generated}, acknowledged {producer.stats.acknowledged}, "
                f"pending {producer.pending_count()}, in sink {in_sink}, "
                f"driver {inc.number if inc else '-'} {'running' if supervisor.is_ready() else 'starting'}, "
                f"executors {len(supervisor.executors())}, shards {open_shards} open / {all_shards}"
            )
        time.sleep(1.0)


def replay_command(settings: SoakSettings) -> str:
    """The `make soak` line that draws the same plans again."""
    default = SoakSettings(seed=settings.seed, seconds=settings.seconds)
    extra = [
        f"--{flag} {value}"
        for flag, value, base in (
            ("modes", ",".join(settings.modes), ",".join(default.modes)),
            ("menu", settings.menu, default.menu),
            ("gap-min", f"{settings.gap_min:g}", f"{default.gap_min:g}"),
            ("gap-max", f"{settings.gap_max:g}", f"{default.gap_max:g}"),
            ("warmup", f"{settings.warmup:g}", f"{default.warmup:g}"),
            ("rate", f"{settings.rate:g}", f"{default.rate:g}"),
        )
        if value != base
    ]
    args = f' SOAK_ARGS="{" ".join(extra)}"' if extra else ""
    return f"make soak SEED={settings.seed} MINUTES={settings.seconds / 60:g}{args}"


def run(settings: SoakSettings) -> tuple[dict[str, Any], int]:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")
    name = f"{stamp}-seed{settings.seed}-{settings.seconds:.0f}s"
    work = settings.out / "tmp" / name
    log = Log(work / "soak.log")
    log(f"seed {settings.seed} (replay: {replay_command(settings)}); work folder {work}")
    started = time.monotonic()
    jars = snapshot_jars(work / "jars")
    modes = [run_mode(settings, mode, work / mode, jars, log) for mode in settings.modes]
    summary = {
        "name": name,
        "seed": settings.seed,
        "settings": settings.as_dict(),
        "passed": all(m["passed"] for m in modes),
        "seconds": round(time.monotonic() - started, 1),
        "modes": modes,
    }
    settings.out.mkdir(parents=True, exist_ok=True)
    timeline = {
        "seed": settings.seed,
        "settings": settings.as_dict(),
        "modes": {m["mode"]: {"plan": m["plan"], "executed": m["timeline"]} for m in modes},
    }
    (settings.out / f"{name}-timeline.json").write_text(json.dumps(timeline, indent=2) + "\n")
    (settings.out / f"{name}.json").write_text(
        json.dumps(
            {**summary, "modes": [{k: v for k, v in m.items() if k not in ("timeline", "plan")} for m in modes]},
            indent=2,
            default=str,
        )
        + "\n"
    )
    print_summary(summary, log)
    if summary["passed"] and not settings.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work folder kept: {work}", flush=True)
    print(f"summary: {settings.out / f'{name}.json'}; timeline: {settings.out / f'{name}-timeline.json'}", flush=True)
    return summary, 0 if summary["passed"] else 1


def print_summary(summary: dict[str, Any], log: Log) -> None:
    log(f"=== soak {summary['name']}: {'PASSED' if summary['passed'] else 'FAILED'} in {summary['seconds']:.0f} s")
    for m in summary["modes"]:
        fig = m.get("figures", {})
        res = m.get("resources", {})
        start, end = res.get("start") or {}, res.get("end") or {}
        log(
            f"--- {m['mode']}: {'passed' if m['passed'] else 'FAILED'}; faults {m['faultsInjected']} "
            f"(skipped or failed: {m['faultsSkippedOrFailed']})"
        )
        if "bUserRecords" not in fig:
            log(
                f"    produced (acknowledged) {fig.get('acknowledged')}, stored {fig.get('storedRecords')} "
                f"(producer duplicates {fig.get('producerDuplicates')}), read {fig.get('read')}, "
                f"lost {fig.get('lost')}, duplicated {fig.get('duplicated')}, "
                f"out of key order {fig.get('keyOrderViolations')}; "
                f"{m.get('batches')} batches, {len(m['drivers'])} drivers, shards {fig.get('shards')}"
            )
        else:
            log(
                f"    pipeline: A holds {fig['storedRecords']} records ({fig['acknowledged']} acknowledged, "
                f"{fig['producerDuplicatesInA']} stored twice by the producer); "
                f"lost {fig['lost']}, out of key order {fig['keyOrderViolations']}; B holds {fig['bUserRecords']} "
                f"user records in {fig.get('shardsB')} shards ({fig.get('closedShardsB')} closed); duplicates "
                f"{fig['duplicated']} (rate {fig['duplicateRate']}) by cause {fig['duplicatesByCause']}; misplaced "
                f"aggregates skipped {fig['misplacedAggregatesSkipped']}, key order behind a misplaced resend "
                f"{fig['keyOrderBehindMisplacedResend']}; {len(m['drivers'])} drivers"
            )
        log(
            f"    driver {start.get('incarnation')}: heap after GC {start.get('heapUsedAfterGcMiB')} -> "
            f"{end.get('heapUsedAfterGcMiB')} MiB, threads {start.get('threadsCounted')} -> "
            f"{end.get('threadsCounted')} "
            f"(+ Spark's bounded pools {start.get('sparkPoolThreads')} -> {end.get('sparkPoolThreads')}), "
            f"fds {start.get('fds')} -> {end.get('fds')}"
        )
        for c in m["checks"]:
            log(f"    [{'ok' if c['passed'] else 'FAIL'}] {c['name']}: {c['detail']}")
            if not c["passed"]:
                for example in c.get("examples", [])[:5]:
                    log(f"           e.g. {json.dumps(example, default=str)[:400]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=None, help="replays a run (default: a new random seed)")
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--minutes", type=float, default=10.0, help="length of the chaos phase per mode")
    length.add_argument("--seconds", type=float, default=None)
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma-separated, of {','.join(MODES + PIPELINE_MODES)}"
    )
    parser.add_argument("--menu", default="full", choices=sorted(P.MENUS))
    parser.add_argument("--rate", type=float, default=100.0, help="records per second")
    parser.add_argument("--gap-min", type=float, default=3.0, help="least seconds between two planned faults")
    parser.add_argument("--gap-max", type=float, default=7.0, help="most seconds between two planned faults")
    parser.add_argument(
        "--warmup", type=float, default=30.0, help="seconds after its query started before a driver's baseline sample"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder even when every check passed")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10**6)
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    if any(m not in MODES + PIPELINE_MODES for m in modes):
        parser.error(f"--modes: each of {', '.join(MODES + PIPELINE_MODES)}")
    settings = SoakSettings(
        seed=seed,
        seconds=args.seconds if args.seconds is not None else args.minutes * 60,
        modes=modes,
        menu=args.menu,
        rate=args.rate,
        gap_min=args.gap_min,
        gap_max=args.gap_max,
        warmup=args.warmup,
        keep_work=args.keep,
        out=args.out.resolve(),
    )
    _, code = run(settings)
    return code


if __name__ == "__main__":
    sys.exit(main())
