"""What a Spark driver JVM reports about itself through java.lang.management, read over py4j: the process's CPU
time and its heap pools. Works on any SparkSession's JVM: the bench's own, or a child driver's (bench/child.py)."""

from __future__ import annotations

import os
import threading
from typing import Any

MIB = 1024 * 1024


class ProcessCpu:
    """CPU time used by the whole JVM process: every thread (Spark tasks, the SDK's HTTP threads, GC, py4j's
    server side), from com.sun.management.OperatingSystemMXBean.getProcessCpuTime (nanoseconds; Linux counts in
    10 ms ticks, so deltas below a second are coarse).

    py4j looks a method up on the object's runtime class and that class's direct interfaces only; the bean's class
    (com.sun.management.internal.OperatingSystemImpl) is in a package its module does not open, and its direct
    interface (UnixOperatingSystemMXBean) inherits getProcessCpuTime without declaring it, so a plain
    `bean.getProcessCpuTime()` fails with "does not exist". The method is therefore taken from the exported
    interface and invoked through java.lang.reflect, which the module system allows."""

    def __init__(self, spark: Any) -> None:
        jvm = spark.sparkContext._jvm
        gateway = spark.sparkContext._gateway
        self._bean = jvm.java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        interface = jvm.java.lang.Class.forName("com.sun.management.OperatingSystemMXBean")
        self._method = interface.getMethod("getProcessCpuTime", gateway.new_array(jvm.java.lang.Class, 0))
        self._no_args = gateway.new_array(jvm.java.lang.Object, 0)

    def seconds(self) -> float:
        return int(self._method.invoke(self._bean, self._no_args)) / 1e9


def _threads(pid: int) -> dict[str, tuple[str, int]]:
    """Every live thread of process `pid`, from /proc: tid -> (its name as Linux keeps it, Java's first 15
    characters; user + system CPU ticks). Empty where /proc is not there."""
    out: dict[str, tuple[str, int]] = {}
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[tid] = (name, int(fields[11]) + int(fields[12]))  # utime, stime
        except OSError:
            continue  # the thread ended
    return out


class JitCpu:
    """CPU time of the JVM's JIT compiler threads (C1, C2), from /proc: a fresh JVM compiles for tens of seconds
    (Spark's code and each query's generated classes), which swamps a short read's own cost. Linux only; 0 when
    /proc is not there."""

    def __init__(self, spark: Any) -> None:
        self.pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())

    def seconds(self) -> float:
        ticks = sum(t for name, t in _threads(self.pid).values() if "CompilerThre" in name)
        return ticks / os.sysconf("SC_CLK_TCK")


class ThreadCpu:
    """CPU time of groups of the JVM's threads, by the start of their names (Linux keeps Java's first 15
    characters: "stream executio", "Executor task l"), from /proc. Sampled every `every` seconds and summed per
    thread, so a pooled thread that ends between two readings loses at most its last interval. Linux only."""

    def __init__(self, spark: Any, groups: dict[str, str], every: float = 1.0) -> None:
        self.pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        self._groups = groups
        self._last: dict[str, int] = {}
        self._totals = dict.fromkeys(groups, 0)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._seen_once = False  # threads found by the first sample count from then, later ones from their start
        self.sample()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self.sample()

    def sample(self) -> None:
        with self._lock:
            for tid, (name, ticks) in _threads(self.pid).items():
                group = next((g for g, prefix in self._groups.items() if name.startswith(prefix)), None)
                if group is None:
                    continue
                self._totals[group] += ticks - self._last.get(tid, ticks if not self._seen_once else 0)
                self._last[tid] = ticks
            self._seen_once = True

    def seconds(self) -> dict[str, float]:
        """CPU seconds per group since this reader began."""
        self.sample()
        with self._lock:
            return {g: t / os.sysconf("SC_CLK_TCK") for g, t in self._totals.items()}

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


class HeapPeaks:
    """Heap of a driver JVM from its MemoryPoolMXBeans (peaks reset before a run, read after it).

    The sum of each heap pool's own peak is an upper bound of the heap's true peak (pools peak at different
    moments) and counts garbage not yet collected; in local mode that JVM is the driver and the executor at once.
    `live_after_gc_mib` is the heap each pool kept after its last collection: with G1, a young collection leaves
    the old generation's garbage in place, so this bounds what a run held from above. `live_mib` forces a full
    collection first (System.gc(), a stop-the-world full GC under G1's defaults): what the JVM really held at that
    moment, at the price of a pause, so a run samples it every few seconds only."""

    def __init__(self, spark: Any) -> None:
        self._jvm = spark.sparkContext._jvm
        factory = self._jvm.java.lang.management.ManagementFactory
        self._memory = factory.getMemoryMXBean()
        self.pools = [p for p in factory.getMemoryPoolMXBeans() if str(p.getType().name()) == "HEAP"]
        self.max_heap = int(factory.getMemoryMXBean().getHeapMemoryUsage().getMax())

    def reset(self) -> None:
        for pool in self.pools:
            pool.resetPeakUsage()

    def peak_mib(self) -> float:
        return sum(int(p.getPeakUsage().getUsed()) for p in self.pools) / MIB

    def used_mib(self) -> float:
        return sum(int(p.getUsage().getUsed()) for p in self.pools) / MIB

    def live_mib(self) -> float:
        """The heap in use right after a full collection."""
        self._jvm.java.lang.System.gc()
        return int(self._memory.getHeapMemoryUsage().getUsed()) / MIB

    def live_after_gc_mib(self) -> float:
        """Sum over the heap pools of what the last collection left (pools that report none count 0)."""
        total = 0
        for pool in self.pools:
            after = pool.getCollectionUsage()  # None for a pool without collection usage
            total += int(after.getUsed()) if after is not None else 0
        return total / MIB


class CallQueue:
    """The connector's polled GetRecords calls in this JVM (local mode: the executor's), from
    `Prefetcher.callQueueTotals`: how long calls waited for a call slot, the idle budget's polls (after three empty
    answers at the tip) apart from the others, and how long they took. `between` gives a window's means; a wait that
    grows while the calls' own time does not is the executor's slots, a call time that grows is the endpoint (or the
    machine) answering slowly."""

    FIELDS = ("readCalls", "readWaitNanos", "idleCalls", "idleWaitNanos", "answers", "callNanos")

    def __init__(self, spark: Any) -> None:
        self._prefetcher = spark.sparkContext._jvm.io.github.sparkkinesis.source.executor.Prefetcher

    def totals(self) -> dict[str, int]:
        t = self._prefetcher.callQueueTotals()
        return {f: int(getattr(t, f)()) for f in self.FIELDS}

    @staticmethod
    def between(before: dict[str, int], after: dict[str, int], seconds: float) -> dict[str, float | None]:
        d = {f: after[f] - before[f] for f in CallQueue.FIELDS}

        def mean_ms(nanos: int, n: int) -> float | None:
            return round(nanos / n / 1e6, 2) if n else None

        return {
            "readCallsPerSecond": round(d["readCalls"] / seconds, 1),
            "idleCallsPerSecond": round(d["idleCalls"] / seconds, 1),
            "readWaitMs": mean_ms(d["readWaitNanos"], d["readCalls"]),
            "idleWaitMs": mean_ms(d["idleWaitNanos"], d["idleCalls"]),
            "callMs": mean_ms(d["callNanos"], d["answers"]),
        }
