"""The query's driver processes: started with `spark-submit` (soak/driver_job.py), stopped gracefully, killed with
SIGKILL, restarted from the checkpoint; their executor JVMs found and killed; their heap, threads and descriptors
measured; and any exit the harness did not cause recorded as a failure (then the driver is restarted so the run
can still check its data).

Each incarnation is a `spark-submit` started in a session of its own: `bin/spark-submit` execs `spark-class`,
which execs the JVM, so the process started is the driver JVM, and everything it starts (the Python driver program,
local-cluster's executor JVMs) is in its process group, which is killed whole once the JVM is gone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from soak.env import REPO

MASTER = "local-cluster[2,1,1024]"
EXECUTOR_MAIN = "CoarseGrainedExecutorBackend"
#: a driver that has not started its query after this long counts as a failed start
START_TIMEOUT = 240.0
#: a graceful stop that takes longer counts as hung (then the driver is killed)
STOP_TIMEOUT = 120.0


@dataclass
class Incarnation:
    number: int
    process: subprocess.Popen[bytes]
    log: Path
    launched: float
    #: monotonic time its query was seen started (the started file), or None
    ready: float | None = None
    info: dict[str, Any] = field(default_factory=dict)
    #: why it ended, once it has: "stopped", "killed", or "unexpected"
    ended: str | None = None
    expected_exit: bool = False

    @property
    def pid(self) -> int:
        return self.process.pid


def _proc_children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes whose parent is `pid`."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                out.append((int(entry), f.read().replace(b"\0", b" ").decode(errors="replace")))
        except (OSError, ValueError, IndexError):
            continue
    return out


#: Spark's own bounded thread pools in the driver (`block-manager-ask-thread-pool`,
#: `block-manager-storage-async-thread-pool`, at most 100 threads each, idle ones ending after 60 s), by the
#: 15-character names Linux keeps: they fill over a driver's first half minute of batches and empty after a quiet
#: minute, a swing of up to 200 threads that says nothing about a leak, so the leak check counts threads without them
SPARK_BOUNDED_POOLS = ("block-manager-a", "block-manager-s")


def proc_threads_and_fds(pid: int) -> dict[str, int] | None:
    """Threads (the kernel's: Java, GC, JIT and native ones), those outside Spark's bounded pools, and open
    descriptors of a process."""
    try:
        names = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    names.append(f.read().strip())
            except OSError:
                continue  # the thread ended
        pooled = sum(1 for n in names if n.startswith(SPARK_BOUNDED_POOLS))
        return {
            "threads": len(names),
            "sparkPoolThreads": pooled,
            "threadsCounted": len(names) - pooled,
            "fds": len(os.listdir(f"/proc/{pid}/fd")),
        }
    except OSError:
        return None


class DriverSupervisor:
    """Owns the current driver incarnation; every operation holds one lock, so the chaos loop and the run's
    monitor never act on a driver at the same time."""

    def __init__(
        self,
        work: Path,
        endpoint: str,
        stream: str,
        mode: str,
        jar: str,
        spark_home: str,
        trigger: str = "1 second",
        sink_stream: str | None = None,
        aggregation: str = "none",
    ) -> None:
        self.work = work
        self.control = work / "control"
        self.control.mkdir(parents=True, exist_ok=True)
        self.checkpoint = work / "checkpoint"
        self.sink = work / "sink"
        self.endpoint, self.stream, self.mode, self.jar, self.spark_home = endpoint, stream, mode, jar, spark_home
        self.trigger = trigger
        #: pipeline modes: the query writes to this stream with the connector's sink (soak/driver_job.py)
        self.sink_stream, self.aggregation = sink_stream, aggregation
        self.incarnations: list[Incarnation] = []
        self.failures: list[dict[str, Any]] = []
        self._lock = threading.RLock()
        self._measurements = 0

    @property
    def current(self) -> Incarnation | None:
        return self.incarnations[-1] if self.incarnations else None

    # --- start ------------------------------------------------------------------------------------------------------
    def start(self) -> Incarnation:
        with self._lock:
            n = len(self.incarnations) + 1
            log = self.work / f"driver-{n}.log"
            command = [
                os.path.join(self.spark_home, "bin", "spark-submit"),
                "--master",
                MASTER,
                "--driver-memory",
                "1g",
                "--jars",
                self.jar,
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.sql.shuffle.partitions=2",
                # Scratch space (shuffle and block files, fetched jars) in the work folder: a driver killed
                # with SIGKILL cannot remove its own.
                "--conf",
                f"spark.local.dir={self.work / 'spark-local'}",
                str(REPO / "soak" / "driver_job.py"),
                "--endpoint",
                self.endpoint,
                "--stream",
                self.stream,
                "--mode",
                self.mode,
                "--checkpoint",
                str(self.checkpoint),
                "--sink",
                str(self.sink),
                "--control",
                str(self.control),
                "--incarnation",
                str(n),
                "--trigger",
                self.trigger,
                *(["--sink-stream", self.sink_stream, "--aggregation", self.aggregation] if self.sink_stream else []),
            ]
            env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET")}
            env |= {
                "SPARK_HOME": self.spark_home,
                "PYSPARK_PYTHON": sys.executable,
                "PYSPARK_DRIVER_PYTHON": sys.executable,
            }
            with log.open("wb") as sink:
                process = subprocess.Popen(
                    command,
                    cwd=self.work,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            incarnation = Incarnation(n, process, log, time.monotonic())
            self.incarnations.append(incarnation)
            return incarnation

    def is_ready(self) -> bool:
        """Whether the current driver's query has started (its started file is there)."""
        with self._lock:
            inc = self.current
            if inc is None or inc.ended is not None:
                return False
            if inc.ready is None:
                started = self.control / f"{inc.number}.started.json"
                if started.exists():
                    inc.info = json.loads(started.read_text())
                    inc.ready = time.monotonic()
            return inc.ready is not None

    def wait_ready(self, timeout: float = START_TIMEOUT) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.is_ready():
                return True
            self.check()
            time.sleep(0.25)
        return self.is_ready()

    # --- end ----------------------------------------------------------------------------------------------------------
    def _reap(self, inc: Incarnation, how: str) -> None:
        """After the JVM exited: its process group (the Python program, executor JVMs) goes too."""
        try:
            os.killpg(inc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        inc.ended = how

    def _to_end(self) -> Incarnation | dict[str, Any]:
        """Under the lock: the running driver, marked as ended on purpose, or why there is none to end."""
        inc = self.current
        if inc is None or inc.ended is not None:
            return {"skipped": "no driver running"}
        if inc.process.poll() is not None:
            self.check()
            return {"skipped": "the driver had already ended (recorded as a failure)"}
        inc.expected_exit = True
        return inc

    def kill(self) -> dict[str, Any]:
        """SIGKILL to the driver JVM (whatever it is doing), then its process group."""
        with self._lock:
            inc = self._to_end()
            if isinstance(inc, dict):
                return inc
            was_ready = self.is_ready()
            os.kill(inc.pid, signal.SIGKILL)
            inc.process.wait()
            self._reap(inc, "killed")
            return {"incarnation": inc.number, "pid": inc.pid, "queryWasRunning": was_ready}

    def stop_gracefully(self, timeout: float = STOP_TIMEOUT) -> dict[str, Any]:
        """Asks the query to stop (`query.stop()`, then `spark.stop()`), waits for the process to end."""
        with self._lock:
            inc = self._to_end()
            if isinstance(inc, dict):
                return inc
            (self.control / f"{inc.number}.stop").touch()
            started = time.monotonic()
            try:
                code: int | None = inc.process.wait(timeout)
            except subprocess.TimeoutExpired:
                code = None
                os.kill(inc.pid, signal.SIGKILL)
                inc.process.wait()
            self._reap(inc, "stopped")
            exit_file = self.control / f"{inc.number}.exit.json"
            exit_info = json.loads(exit_file.read_text()) if exit_file.exists() else None
            result = {
                "incarnation": inc.number,
                "exitCode": code,
                "seconds": round(time.monotonic() - started, 1),
                "exit": exit_info,
            }
            if code != 0 or (exit_info or {}).get("exception"):
                self.failures.append(
                    {
                        "what": "graceful stop failed"
                        if code is not None
                        else f"graceful stop hung for {timeout:.0f} s (then killed)",
                        **result,
                        "logTail": self.log_tail(inc),
                    }
                )
            return result

    def first_batch_committed(self) -> bool:
        """Whether the checkpoint holds a committed batch. Until then a restart goes through Spark's check that a new
        query's checkpoint is empty, which a stop or kill during the first offset-log write fails (see
        docs/troubleshooting.md, "should be empty on batch 0")."""
        commits = self.checkpoint / "commits"
        return commits.is_dir() and any(p.name.isdigit() for p in commits.iterdir())

    def restart(self) -> dict[str, Any]:
        inc = self.start()
        return {"incarnation": inc.number, "pid": inc.pid}

    def check(self) -> dict[str, Any] | None:
        """If the current driver ended without the harness asking: the failure (recorded), and a new driver."""
        with self._lock:
            inc = self.current
            if inc is None or inc.ended is not None or inc.process.poll() is None:
                return None
            self._reap(inc, "unexpected")
            exit_file = self.control / f"{inc.number}.exit.json"
            failure = {
                "what": "the driver ended without being asked to",
                "incarnation": inc.number,
                "exitCode": inc.process.returncode,
                "exit": json.loads(exit_file.read_text()) if exit_file.exists() else None,
                "logTail": self.log_tail(inc),
            }
            self.failures.append(failure)
            self.start()
            return failure

    def shutdown(self) -> None:
        """The end of a run, or an aborted one: nothing of ours is left running."""
        with self._lock:
            for inc in self.incarnations:
                if inc.process.poll() is None:
                    inc.expected_exit = True
                    os.kill(inc.pid, signal.SIGKILL)
                    inc.process.wait()
                if inc.ended is None:
                    self._reap(inc, "killed")

    # --- executors ----------------------------------------------------------------------------------------------
    def executors(self) -> list[int]:
        """Pids of the current driver's executor JVMs (local-cluster starts them as the driver JVM's children)."""
        inc = self.current
        if inc is None or inc.ended is not None:
            return []
        return sorted(pid for pid, cmd in _proc_children(inc.pid) if EXECUTOR_MAIN in cmd)

    def kill_executor(self, pick: float, wait: float = 20.0) -> dict[str, Any]:
        """SIGKILL to one executor JVM (`pick` in [0, 1) chooses among them by pid); local-cluster starts another.
        Waits up to `wait` s for two executor JVMs to be there: a driver that is restarting has its executors a few
        seconds after its JVM starts, well before its query runs, and killing one then is a fault too."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            with self._lock:
                pids = self.executors()
                if len(pids) >= 2:
                    victim = pids[min(len(pids) - 1, int(pick * len(pids)))]
                    os.kill(victim, signal.SIGKILL)
                    return {
                        "incarnation": self.current.number if self.current else None,
                        "pid": victim,
                        "executors": pids,
                        "queryRunning": self.is_ready(),
                    }
            time.sleep(0.5)
        return {"skipped": f"fewer than two executor JVMs for {wait:.0f} s"}

    # --- measurements -------------------------------------------------------------------------------------------
    def measure(self, timeout: float = 30.0) -> dict[str, Any] | None:
        """Heap after a full GC (asked of the driver), threads and open descriptors (/proc) of the current driver
        JVM; None when it is not running its query."""
        with self._lock:
            if not self.is_ready():
                return None
            inc = self.current
            assert inc is not None
            self._measurements += 1
            name = f"{inc.number}.measure-{self._measurements}"
            (self.control / name).touch()
        answer = self.control / f"{name}.json"
        deadline = time.monotonic() + timeout
        while not answer.exists():
            if time.monotonic() > deadline or inc.ended is not None:
                return None
            time.sleep(0.1)
        heap = json.loads(answer.read_text())
        proc = proc_threads_and_fds(inc.pid)
        if proc is None:
            return None
        return {
            "incarnation": inc.number,
            "heapUsedAfterGcMiB": round(heap["heapUsedAfterGc"] / 2**20, 1),
            "jvmThreads": heap["jvmThreads"],
            **proc,
            "time": heap["time"],
            "monotonic": time.monotonic(),
            "sinceReady": round(time.monotonic() - (inc.ready or 0), 1),
        }

    # --- evidence -----------------------------------------------------------------------------------------------
    @staticmethod
    def log_tail(inc: Incarnation, lines: int = 40) -> list[str]:
        try:
            return inc.log.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return []

    def progress(self) -> list[dict[str, Any]]:
        """Every incarnation's progress lines, in order."""
        out: list[dict[str, Any]] = []
        for inc in self.incarnations:
            path = self.control / f"{inc.number}.progress.jsonl"
            if path.exists():
                out.extend(
                    {"incarnation": inc.number, **json.loads(line)}
                    for line in path.read_text().splitlines()
                    if line.strip()
                )
        return out

    def summary(self) -> list[dict[str, Any]]:
        return [
            {
                "incarnation": i.number,
                "pid": i.pid,
                "ended": i.ended,
                "exitCode": i.process.returncode,
                "secondsToQueryStart": round(i.ready - i.launched, 1) if i.ready else None,
            }
            for i in self.incarnations
        ]
