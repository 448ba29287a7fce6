"""The Python side of the example runner: one process, one SparkSession, the docs' Python blocks run in it.

Started by `docs.tools.examples.PythonSession`, which talks to it over two pipes (file descriptors given as
arguments): it reads one JSON request per line (a doc file's blocks) and answers with JSON lines (each block's
outcome, then the file's end). The blocks of one file share a namespace, like the cells of a notebook; each file
gets a fresh one, with `spark` predefined. Snippet output goes to this process's stdout/stderr, which the runner
keeps as the file's log.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming.listener import StreamingQueryListener

from pyspark_kinesis import configure_spark

EXTENSIONS = "io.github.sparkkinesis.KinesisSparkExtensions"
#: how long a query stopped by the harness may take to report its end
STOP_WAIT_SECONDS = 30.0
MESSAGE_LINES = 12


class QueryWatch(StreamingQueryListener):
    """Records every streaming query a block starts and how it ended, so a query that fails in the background
    (after `start()` returned) fails its block. Spark calls onQueryStarted before `start()` returns."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.started: dict[str, str] = {}
        self.ended: dict[str, str | None] = {}

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802 - Spark's name
        with self.lock:
            self.started[str(event.runId)] = event.name or str(event.id)

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        with self.lock:
            self.ended[str(event.runId)] = event.exception
            self.lock.notify_all()

    def settle(self, spark: SparkSession, drain_seconds: float) -> list[str]:
        """Lets every active query process what is available (at most `drain_seconds` each), stops it, and
        returns the failures of the queries started since the last call."""
        for query in spark.streams.active:
            drain = threading.Thread(target=_drain, args=(query,), daemon=True)
            drain.start()
            drain.join(drain_seconds)
            query.stop()
        deadline = time.monotonic() + STOP_WAIT_SECONDS
        with self.lock:
            while not set(self.started) <= set(self.ended) and time.monotonic() < deadline:
                self.lock.wait(deadline - time.monotonic())
            problems = []
            for run_id, name in self.started.items():
                if run_id not in self.ended:
                    problems.append(f"streaming query {name} did not stop within {STOP_WAIT_SECONDS:.0f} s")
                elif self.ended[run_id]:
                    problems.append(f"streaming query {name} failed: {_short(self.ended[run_id] or '')}")
            self.started.clear()
            self.ended.clear()
        return problems


def _drain(query: Any) -> None:
    try:
        query.processAllAvailable()
    except Exception:  # noqa: BLE001 - the listener reports how the query ended
        pass


def _short(message: str) -> str:
    """A JVM exception string without its stack frames, at most MESSAGE_LINES lines."""
    lines = [line for line in message.splitlines() if not line.lstrip().startswith("at ") and line.strip()]
    return "\n".join(lines[:MESSAGE_LINES])


def _error(exc: BaseException, path: str, block_line: int) -> tuple[int, str]:
    """(the doc line the error was raised at, the message)."""
    line = block_line
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path and frame.lineno:
            line = frame.lineno
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return line, _short(message)


def _session() -> SparkSession:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("docs-examples")
        .config("spark.sql.extensions", EXTENSIONS)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # a streaming aggregation's 200 default partitions cost seconds per batch on 2 cores
        .config("spark.sql.shuffle.partitions", "2")
    )
    spark = configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _reset(spark: SparkSession, conf: dict[str, str]) -> None:
    """What one file's blocks changed in the shared session, undone for the next file."""
    for key, value in spark.conf.getAll.items():
        if key not in conf:
            spark.conf.unset(key)
        elif value != conf[key]:
            spark.conf.set(key, conf[key])
    for table in spark.catalog.listTables():
        if table.isTemporary:
            spark.catalog.dropTempView(table.name)
    spark.catalog.clearCache()


def main() -> None:
    requests = os.fdopen(int(sys.argv[1]), "r")
    answers = os.fdopen(int(sys.argv[2]), "w", buffering=1)

    def answer(**fields: Any) -> None:
        answers.write(json.dumps(fields) + "\n")

    spark = _session()
    watch = QueryWatch()
    spark.streams.addListener(watch)
    conf = dict(spark.conf.getAll)
    answer(event="ready")
    for request_line in requests:
        request = json.loads(request_line)
        path, drain = request["path"], request["drainSeconds"]
        os.chdir(request["cwd"])
        namespace: dict[str, Any] = {"__name__": "__main__", "spark": spark}
        for block in request["blocks"]:
            answer(event="start", line=block["line"])
            print(f"--- {path}:{block['line']}", flush=True)
            error: tuple[int, str] | None = None
            try:
                # padded so tracebacks give the line in the doc
                code = compile("\n" * block["line"] + block["code"], path, "exec")
                exec(code, namespace)  # noqa: S102 - running the docs' examples is the point
            except BaseException as exc:  # noqa: BLE001 - SystemExit from a snippet is a failure too
                error = _error(exc, path, block["line"])
            sys.stdout.flush()
            sys.stderr.flush()
            problems = watch.settle(spark, drain)
            answer(
                event="block",
                line=block["line"],
                error=error and {"line": error[0], "message": error[1]},
                queries=problems,
            )
        alive = spark.sparkContext._jsc is not None  # noqa: SLF001 - a snippet may have stopped the session
        if alive:
            _reset(spark, conf)
        answer(event="file", alive=alive)
        if not alive:
            return


if __name__ == "__main__":
    main()
