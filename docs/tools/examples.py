"""Runs the docs' code examples, so they cannot rot (docs/dev/doc-examples.md is the writers' side of this).

Every ```python and ```scala fenced block of README.md, CONTRIBUTING.md and docs/**/*.md runs, unless the line
right before its opening fence is `<!-- not run: <reason> -->`. The blocks of one file and language run in order
in one session, like a notebook's cells, with `spark` predefined: Python blocks in a Python process holding a
classic local[2] SparkSession with the connector jar, Scala blocks in a `spark-shell` of PySpark's distribution.
Each session serves file after file (a JVM starts once, not once per file); between files the Python namespace
and the Scala REPL are reset, and so are the Kinesis streams and the checkpoints the blocks name.

The AWS SDK reaches the local simulator through `AWS_ENDPOINT_URL_KINESIS` (with dummy credentials and region):
the connector leaves endpoint resolution to the SDK when no `endpoint` option is given, so snippets read as a user
writes them, `region` included.

Command line, for one file against a running simulator (`make simulator-up` prints its endpoint):
    .venv/bin/python -m docs.tools.examples --endpoint http://127.0.0.1:PORT docs/reading.md
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[2]
LANGUAGES = ("python", "scala")
EXTENSIONS = "io.github.sparkkinesis.KinesisSparkExtensions"

#: The streams that exist when a file's blocks start (2 shards each); `clicks` holds CLICKS.
STREAMS = ("clicks", "events", "copy", "orders")
SHARDS = 2
CLICKS = [
    {
        "user": f"u{i % 5}",
        "page": ("/home", "/cart", "/search", "/checkout")[i % 4],
        "ts": 1795770000000 + 1000 * i,
    }  # epoch milliseconds
    for i in range(20)
]
#: Credentials and region the SDK (JVM and boto3) finds in the environment; the simulator checks neither.
DUMMY_AWS = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
#: Settings of the developer's own AWS setup that would take a snippet elsewhere than the simulator.
FOREIGN_AWS = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "KINESIS_ENDPOINT",
)

#: A streaming query a block leaves running may process what is available for this long before it is stopped.
DRAIN_SECONDS = 20.0
#: Time a file may take: a base plus this much per block; past it the session is killed and the file fails.
FILE_SECONDS_BASE, FILE_SECONDS_PER_BLOCK = 60.0, 45.0
SESSION_START_SECONDS = 180.0

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
_MARKER = re.compile(r"^<!--\s*not\s+run\b(?P<rest>.*?)-->$", re.IGNORECASE)
_TMP_PATH = re.compile(r"""["'](/tmp/[^"'\s]+)["']""")


# --- the blocks ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Block:
    path: str  # as shown in reports: relative to the repository when inside it
    line: int  # the opening fence's line; the code starts on the next one
    language: str
    code: str
    not_run: str | None  # the reason given in the marker, or None when the block runs


@dataclass
class Doc:
    path: str
    blocks: list[Block]
    errors: list[str]  # "path:line: message" for each malformed or misplaced `not run` marker

    def runnable(self, language: str) -> list[Block]:
        return [b for b in self.blocks if b.language == language and b.not_run is None]


def display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def parse(text: str, path: str) -> Doc:
    """The fenced blocks of a markdown text and the marker errors. Fences nest as CommonMark says: inside a
    ````-fence, ``` lines are content (how a page shows an example of a block)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    errors: list[str] = []
    marker_lines: set[int] = set()  # markers that sit right before a python/scala fence
    open_fence: tuple[str, int, str, int] | None = None  # (fence, indent, language, line)
    body: list[str] = []
    outside: list[int] = []  # line numbers outside any fence
    for number, line in enumerate(lines, start=1):
        match = _FENCE.match(line)
        if open_fence is None:
            if match and not (match["fence"][0] == "`" and "`" in match["info"]):
                info = match["info"].strip()
                open_fence = (match["fence"], len(match["indent"]), info.split()[0].lower() if info else "", number)
                body = []
            else:
                outside.append(number)
            continue
        fence, indent, language, start = open_fence
        closing = line.strip()
        if closing.startswith(fence[0] * len(fence)) and closing.strip(fence[0]) == "":
            if language in LANGUAGES:
                reason = _marker_reason(lines[start - 2] if start >= 2 else "")
                if reason is not None:
                    marker_lines.add(start - 1)
                    if not reason:
                        errors.append(
                            f"{path}:{start - 1}: a `not run` marker needs a reason: "
                            "<!-- not run: <why this block cannot run> -->"
                        )
                blocks.append(Block(path, start, language, "\n".join(body) + "\n", reason))
            open_fence = None
            continue
        body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
    if open_fence is not None:
        errors.append(f"{path}:{open_fence[3]}: the code fence opened here is never closed")
    for number in outside:
        if number not in marker_lines and _marker_reason(lines[number - 1]) is not None:
            errors.append(
                f"{path}:{number}: a `not run` marker must be the line right before a ```python or "
                "```scala opening fence"
            )
    return Doc(path, blocks, errors)


def _marker_reason(line: str) -> str | None:
    """None when the line is no `not run` marker; else its reason ("" when it gives none)."""
    match = _MARKER.match(line.strip())
    if match is None:
        return None
    rest = match["rest"].strip()
    return rest[1:].strip() if rest.startswith(":") else ""


def doc_files(repo: Path = REPO) -> list[Path]:
    """The pages whose examples run: README.md, CONTRIBUTING.md and docs/**/*.md."""
    top = [repo / name for name in ("README.md", "CONTRIBUTING.md") if (repo / name).is_file()]
    return top + sorted((repo / "docs").rglob("*.md"))


def load(path: Path) -> Doc:
    return parse(path.read_text(encoding="utf-8"), display(path))


# --- what a file's run starts from -------------------------------------------------------------------------------
def sdk_environment(endpoint: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a session: the SDKs (Java v2, boto3) send Kinesis calls to `endpoint` whatever region a
    snippet names, with dummy credentials, and nothing of the developer's AWS setup applies."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in FOREIGN_AWS}
    env.update(DUMMY_AWS)
    env["AWS_ENDPOINT_URL_KINESIS"] = endpoint
    # files that do not exist: no profile, credentials or endpoint from ~/.aws
    env["AWS_CONFIG_FILE"] = env["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent/spark-kinesis-docs-examples"
    env["SPARK_HOME"] = spark_home()
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return env


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def connector_jar() -> str:
    """The jar `make python-jar` puts in python/pyspark_kinesis/jars: the one `configure_spark` gives the Python
    session (the Scala 2.13 build, for PySpark 4)."""
    jars = sorted((REPO / "python" / "pyspark_kinesis" / "jars").glob("spark-kinesis-assembly_2.13-*.jar"))
    if len(jars) != 1:
        raise RuntimeError(
            f"expected one spark-kinesis-assembly_2.13 jar in python/pyspark_kinesis/jars, found "
            f"{[j.name for j in jars]}: run 'make build python-jar'"
        )
    return str(jars[0])


def kinesis_client(endpoint: str) -> Any:
    import boto3  # type: ignore[import-untyped]

    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def reset_streams(endpoint: str) -> None:
    """Every stream deleted, then STREAMS created empty but `clicks`, which gets CLICKS (partition key: user)."""
    client = kinesis_client(endpoint)
    existing = client.list_streams()["StreamNames"]
    for name in existing:
        client.delete_stream(StreamName=name, EnforceConsumerDeletion=True)
    for name in existing:
        client.get_waiter("stream_not_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
    for name in STREAMS:
        client.create_stream(StreamName=name, ShardCount=SHARDS)
    for name in STREAMS:
        client.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
    client.put_records(
        StreamName="clicks",
        Records=[{"PartitionKey": click["user"], "Data": json.dumps(click).encode()} for click in CLICKS],
    )


_SPARK_DIR_MARKS = ("metadata", "offsets", "commits", "sources", "_spark_metadata", "_SUCCESS")


def clear_checkpoints(blocks: Iterable[Block]) -> list[str]:
    """Removes the directories under /tmp/ that the blocks name in string literals, when they hold what Spark
    leaves (a checkpoint, a file sink's output): a checkpoint of an earlier run would resume offsets of streams
    that have been recreated since. Returns what it removed."""
    removed = []
    for block in blocks:
        for literal in _TMP_PATH.findall(block.code):
            path = Path(literal)
            if path.is_dir() and not path.is_symlink() and any((path / m).exists() for m in _SPARK_DIR_MARKS):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(literal)
    return removed


# --- results ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Failure:
    location: str  # path:line where it failed (the raising line when known, else the block's fence)
    block: int  # the block's fence line
    message: str

    def __str__(self) -> str:
        where = (
            self.location
            if self.location.endswith(f":{self.block}")
            else f"{self.location} (block at line {self.block})"
        )
        return f"{where}: " + self.message.replace("\n", "\n    ")


@dataclass
class FileRun:
    path: str
    language: str
    blocks: int
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    log: str = ""

    def report(self) -> str:
        head = f"{len(self.failures)} failing example(s) of {self.blocks} {self.language} block(s) in {self.path}:"
        return "\n".join([head, *(f"  {f}" for f in self.failures)])


class _Lines:
    """Lines from a pipe, read with a deadline (a session that hangs must not hang the check)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.fd = stream.fileno()
        self.stream = stream
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)
        self.buffer = b""
        self.closed = False

    def readline(self, deadline: float) -> str | None:
        """The next line; None at the deadline; "" once the pipe is closed."""
        while b"\n" not in self.buffer:
            if self.closed:
                rest, self.buffer = self.buffer, b""
                return rest.decode(errors="replace")
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.selector.select(remaining):
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.closed = True
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode(errors="replace") + "\n"

    def close(self) -> None:
        self.selector.close()
        self.stream.close()


def _file_deadline(blocks: list[Block]) -> float:
    return time.monotonic() + FILE_SECONDS_BASE + FILE_SECONDS_PER_BLOCK * len(blocks)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Ends a session and what it started: sessions run in a process group of their own (spark-shell is a
    script whose JVM is a child, and would outlive the script)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


# --- the Python session -------------------------------------------------------------------------------------------
class PythonSession:
    """A `docs/tools/python_session.py` process, started on first use and again after a file killed it."""

    def __init__(self, env: dict[str, str], workdir: Path, python: str = sys.executable) -> None:
        self.env, self.workdir, self.python = env, workdir, python
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / "python-session.log"

    def _start(self) -> None:
        request_read, request_write = os.pipe()
        answer_read, answer_write = os.pipe()
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child holds it
        self.process = subprocess.Popen(
            [self.python, str(Path(__file__).with_name("python_session.py")), str(request_read), str(answer_write)],
            env=self.env,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=(request_read, answer_write),
            start_new_session=True,
        )
        log.close()
        os.close(request_read)
        os.close(answer_write)
        self.requests = os.fdopen(request_write, "w", buffering=1)
        self.answers = _Lines(os.fdopen(answer_read, "rb", buffering=0))
        answer = self._answer(time.monotonic() + SESSION_START_SECONDS)
        if answer is None or answer.get("event") != "ready":
            self.close(kill=True)
            raise RuntimeError(
                f"the Python examples session did not start; its log: {self.log_path}\n" + self._log_tail(0)
            )

    def _answer(self, deadline: float) -> dict[str, Any] | None:
        """The session's next answer; None at the deadline; {} once it has exited."""
        line = self.answers.readline(deadline)
        if line is None:
            return None
        try:
            answer: dict[str, Any] = json.loads(line)
            return answer
        except json.JSONDecodeError:
            return {}  # the pipe closed, possibly mid-line

    def _log_tail(self, since: int) -> str:
        with open(self.log_path, "rb") as log:
            log.seek(since)
            return log.read().decode(errors="replace")

    def run(self, blocks: list[Block], cwd: Path) -> FileRun:
        path = blocks[0].path
        result = FileRun(path, "python", len(blocks))
        began = time.monotonic()
        if self.process is None or self.process.poll() is not None:
            self._start()
        since = self.log_path.stat().st_size
        self.requests.write(
            json.dumps(
                {
                    "path": path,
                    "cwd": str(cwd),
                    "drainSeconds": DRAIN_SECONDS,
                    "blocks": [{"line": b.line, "code": b.code} for b in blocks],
                }
            )
            + "\n"
        )
        deadline, current = _file_deadline(blocks), blocks[0].line
        while True:
            answer = self._answer(deadline)
            if not answer:
                reason = "timed out" if answer is None else "the Python session exited"
                result.failures.append(
                    Failure(f"{path}:{current}", current, f"{reason} while this block ran (the session is restarted)")
                )
                self.close(kill=True)
                break
            if answer["event"] == "start":
                current = answer["line"]
            elif answer["event"] == "block":
                if answer["error"]:
                    result.failures.append(
                        Failure(f"{path}:{answer['error']['line']}", answer["line"], answer["error"]["message"])
                    )
                result.failures.extend(
                    Failure(f"{path}:{answer['line']}", answer["line"], q) for q in answer["queries"]
                )
            elif answer["event"] == "file":
                if not answer["alive"]:
                    self.close()
                break
        result.log = self._log_tail(since)
        result.seconds = time.monotonic() - began
        return result

    def close(self, kill: bool = False) -> None:
        """Ends the session: at the end of its requests, or at once (`kill`) when it hangs."""
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            self.requests.close()
        if not kill:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(30)
        _stop(self.process)
        self.answers.close()
        self.process = None


# --- the Scala session --------------------------------------------------------------------------------------------
_HARNESS = """\
object DocsHarness {
  import java.util.concurrent.ConcurrentHashMap
  import scala.jdk.CollectionConverters._
  import org.apache.spark.sql.streaming.StreamingQueryListener
  import org.apache.spark.sql.streaming.StreamingQueryListener._

  private val mark = "@@TOKEN"
  @volatile private var done = 0
  private val started = new ConcurrentHashMap[String, String]()
  private val ended = new ConcurrentHashMap[String, Option[String]]()
  // Spark calls onQueryStarted before start() returns, so every query a block starts is known when it ends.
  private val watch = new StreamingQueryListener {
    override def onQueryStarted(e: QueryStartedEvent): Unit =
      started.put(e.runId.toString, Option(e.name).getOrElse(e.id.toString))
    override def onQueryProgress(e: QueryProgressEvent): Unit = ()
    override def onQueryTerminated(e: QueryTerminatedEvent): Unit = ended.synchronized {
      ended.put(e.runId.toString, e.exception); ended.notifyAll()
    }
  }
  spark.streams.addListener(watch)

  def begin(line: Int): Unit = { done = 0; println(s"$mark BEGIN $line") }
  def ok(line: Int): Unit = done = line

  def check(line: Int, drainMillis: Long): Unit = {
    val problems = settle(drainMillis)
    problems.foreach(println)
    println(s"$mark ${if (done == line && problems.isEmpty) "OK" else "FAIL"} $line")
  }

  def end(): Unit = { settle(0); spark.streams.removeListener(watch); println(s"$mark END") }

  private def settle(drainMillis: Long): Seq[String] = {
    spark.streams.active.foreach { q =>
      val drain = new Thread(() => try q.processAllAvailable() catch { case _: Throwable => () })
      drain.setDaemon(true); drain.start(); drain.join(math.max(drainMillis, 1L)); q.stop()
    }
    val deadline = System.currentTimeMillis() + 30000
    ended.synchronized {
      while (!started.keySet.asScala.forall(ended.containsKey) && System.currentTimeMillis() < deadline)
        ended.wait(math.max(1L, deadline - System.currentTimeMillis()))
    }
    val problems = started.asScala.toSeq.flatMap { case (run, name) =>
      Option(ended.get(run)) match {
        case None => Some(s"streaming query $name did not stop within 30 s")
        case Some(Some(e)) =>
          val message = e.linesIterator.filterNot(_.trim.startsWith("at ")).filter(_.trim.nonEmpty).take(12)
          Some(s"streaming query $name failed: " + message.mkString("\\n"))
        case Some(None) => None
      }
    }
    started.clear(); ended.clear(); problems
  }
}
"""

# REPL chatter around what a block printed, left out of failure messages.
_STACK_LINE = re.compile(r"^\s*(at |\.\.\. \d+ (more|elided))")
_REPL_NOISE = re.compile(r"^(// Exiting paste mode.*|Pasting file .*|// Entering paste mode.*|\s*)$")


class ScalaSession:
    """One `spark-shell` of PySpark's distribution with the connector jar, driven through its stdin: each file's
    blocks are pasted one by one (`:paste`, so a chained expression spanning lines parses as written), each
    followed by a check that prints an OK or FAIL marker; `:reset` between files forgets their definitions
    (the shell keeps `spark`)."""

    def __init__(self, env: dict[str, str], workdir: Path, jar: str) -> None:
        self.env, self.workdir, self.jar = env, workdir, jar
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / "scala-session.log"
        self.token = f"@@DOCS-{uuid.uuid4().hex[:8]}"
        self.harness = workdir / "DocsHarness.scala"
        self.harness.write_text(_HARNESS.replace("@@TOKEN", self.token))
        self.files = 0

    def _start(self) -> None:
        shell = Path(self.env["SPARK_HOME"]) / "bin" / "spark-shell"
        self.process = subprocess.Popen(
            # the jar on the driver's class path too: see docs/dev/doc-examples.md on `:reset` and class loaders
            [
                str(shell),
                "--master",
                "local[2]",
                "--jars",
                self.jar,
                "--driver-class-path",
                self.jar,
                "--conf",
                f"spark.sql.extensions={EXTENSIONS}",
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.ui.showConsoleProgress=false",
                "--conf",
                "spark.sql.shuffle.partitions=2",
                "--conf",
                "spark.log.level=ERROR",
            ],
            env=self.env,
            cwd=self.workdir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.output = _Lines(self.process.stdout)
        self._send(f'println("{self.token} READY")')
        lines = self._until(f"{self.token} READY", time.monotonic() + SESSION_START_SECONDS)
        if lines is None or not lines[-1].rstrip().endswith("READY"):
            text = "".join(lines or [])
            self.close(kill=True)
            raise RuntimeError(f"spark-shell did not start:\n{text[-4000:]}")

    def _send(self, *commands: str) -> None:
        self.stdin.write(("\n".join(commands) + "\n").encode())
        self.stdin.flush()

    def _until(self, marker: str, deadline: float) -> list[str] | None:
        """Output lines up to and including the first one holding `marker`; None at the deadline (the lines so
        far are kept in the log); the lines up to the end when the shell exits."""
        lines: list[str] = []
        with open(self.log_path, "a") as log:
            while True:
                line = self.output.readline(deadline)
                if line is None:
                    return None
                log.write(line)
                lines.append(line)
                if line == "" or marker in line:
                    return lines

    def run(self, blocks: list[Block], cwd: Path) -> FileRun:
        path = blocks[0].path
        result = FileRun(path, "scala", len(blocks))
        began = time.monotonic()
        if self.process is None or self.process.poll() is not None:
            self._start()
        self.files += 1
        folder = cwd / "scala-blocks"
        folder.mkdir(parents=True, exist_ok=True)
        # The REPL's cwd stays the shell's: files are named by absolute path. (`:paste` drops leading blank lines,
        # so positions in a block's file are mapped back to the doc by `_failures`.)
        commands = [":reset", f":paste {self.harness}"]
        for block in blocks:
            source = folder / self._block_file(path, block)
            source.write_text(block.code + f"\nDocsHarness.ok({block.line})\n")
            commands += [
                f"DocsHarness.begin({block.line})",
                f":paste {source}",
                f"DocsHarness.check({block.line}, {int(DRAIN_SECONDS * 1000)})",
            ]
        commands.append("DocsHarness.end()")
        self._send(*commands)
        lines = self._until(f"{self.token} END", _file_deadline(blocks))
        result.log = "".join(lines or [])
        result.failures = self._failures(path, lines or [], blocks)
        if lines is None or not lines or lines[-1] == "":
            current = self._current(lines or []) or blocks[0].line
            reason = "timed out" if lines is None else "spark-shell exited"
            result.failures.append(
                Failure(f"{path}:{current}", current, f"{reason} while this block ran (the shell is restarted)")
            )
            self.close(kill=True)
        result.seconds = time.monotonic() - began
        return result

    @staticmethod
    def _block_file(path: str, block: Block) -> str:
        return f"{Path(path).name}-{block.line}.scala"

    def _current(self, lines: list[str]) -> int | None:
        begun = [int(m[1]) for line in lines if (m := re.search(rf"{self.token} BEGIN (\d+)", line))]
        return begun[-1] if begun else None

    def _failures(self, path: str, lines: list[str], blocks: list[Block]) -> list[Failure]:
        failures: list[Failure] = []
        text: list[str] = []
        current: int | None = None
        for line in lines:
            line = line.removeprefix("scala> ").rstrip("\n")
            marker = re.search(rf"{self.token} (BEGIN|OK|FAIL) (\d+)", line)
            if marker is None:
                if current is not None and not _REPL_NOISE.match(line):
                    text.append(line)
                continue
            kind, number = marker[1], int(marker[2])
            if kind == "BEGIN":
                current, text = number, []
            elif kind == "FAIL":
                # the first position in the block's own file: a compile error's, else a stack frame's
                name = re.escape(self._block_file(path, next(b for b in blocks if b.line == number)))
                at = re.search(rf"{name}:(\d+)", "\n".join(text))
                location = f"{path}:{number + int(at[1])}" if at else f"{path}:{number}"
                in_doc = re.compile(rf"(?:/\S*/)?{name}:(\d+)")
                kept = [
                    in_doc.sub(lambda m, first=number: f"{path}:{first + int(m[1])}", t)
                    for t in text
                    if not _STACK_LINE.match(t)
                ]
                message = "\n".join(kept[-40:]).strip() or "failed (no message)"
                failures.append(Failure(location, number, message))
                current = None
            else:
                current = None
        return failures

    def close(self, kill: bool = False) -> None:
        """Ends the shell: at the end of its input, or at once (`kill`) when it hangs."""
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            self.stdin.close()
        if not kill:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(30)
        _stop(self.process)
        self.output.close()
        self.process = None


# --- one file -----------------------------------------------------------------------------------------------------
class Runner:
    """The two sessions and what each file starts from. `run(doc, language)` resets the streams and the blocks'
    checkpoints, then runs the file's blocks of that language in its session."""

    def __init__(self, endpoint: str, workdir: Path) -> None:
        self.endpoint, self.workdir = endpoint, workdir
        self.env = sdk_environment(endpoint)
        self._python: PythonSession | None = None
        self._scala: ScalaSession | None = None

    def session(self, language: str) -> PythonSession | ScalaSession:
        if language == "python":
            if self._python is None:
                self._python = PythonSession(self.env, self.workdir)
            return self._python
        if self._scala is None:
            self._scala = ScalaSession(self.env, self.workdir, connector_jar())
        return self._scala

    def run(self, doc: Doc, language: str) -> FileRun:
        blocks = doc.runnable(language)
        if not blocks:
            return FileRun(doc.path, language, 0)
        reset_streams(self.endpoint)
        clear_checkpoints(blocks)
        cwd = Path(tempfile.mkdtemp(prefix=f"{language}-", dir=self.workdir))
        return self.session(language).run(blocks, cwd)

    def close(self) -> None:
        for session in (self._python, self._scala):
            if session is not None:
                session.close()


@contextlib.contextmanager
def runner(endpoint: str) -> Iterator[Runner]:
    with tempfile.TemporaryDirectory(prefix="docs-examples-") as workdir:
        run = Runner(endpoint, Path(workdir))
        try:
            yield run
        finally:
            run.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoint", required=True, help="a running Kinesis simulator (make simulator-up)")
    parser.add_argument("--language", choices=LANGUAGES, action="append", help="default: both")
    parser.add_argument("--log", action="store_true", help="print each file's session output")
    parser.add_argument("files", nargs="*", type=Path, help="default: every page whose examples run")
    args = parser.parse_args(argv)
    failed = False
    with runner(args.endpoint) as run:
        for path in args.files or doc_files():
            doc = load(path)
            for error in doc.errors:
                print(error)
                failed = True
            for language in args.language or LANGUAGES:
                result = run.run(doc, language)
                if not result.blocks:
                    continue
                if args.log:
                    print(result.log)
                print(
                    result.report()
                    if result.failures
                    else f"ok: {result.blocks} {language} block(s) in {result.path} ({result.seconds:.1f} s)"
                )
                failed |= bool(result.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
