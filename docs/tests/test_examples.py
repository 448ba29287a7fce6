"""The docs' Python and Scala examples run (docs/dev/doc-examples.md): one test per page and language, so a failure
names the page; then the runner's own tests, on markdown written here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from docs.tools import examples
from docs.tools.examples import Doc, Runner, parse

DOCS = [examples.load(path) for path in examples.doc_files()]
PAGES = [
    pytest.param(doc, language, id=f"{doc.path}-{language}")
    for language in examples.LANGUAGES
    for doc in DOCS
    if doc.runnable(language)
]


def test_every_not_run_marker_gives_a_reason_and_sits_on_a_block() -> None:
    errors = [error for doc in DOCS for error in doc.errors]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize(("doc", "language"), PAGES)
def test_examples_run(examples_runner: Runner, doc: Doc, language: str) -> None:
    result = examples_runner.run(doc, language)
    print(result.log)  # pytest shows it when the test fails
    assert not result.failures, result.report()


# --- the runner itself --------------------------------------------------------------------------------------------
def test_blocks_are_found_with_their_lines_and_markers() -> None:
    doc = parse(
        "\n".join(
            [
                "# Page",  # 1
                "```python",  # 2
                "a = 1",  # 3
                "```",  # 4
                "<!-- not run: needs a real AWS account -->",  # 5
                "```scala",  # 6
                "val b = 2",  # 7
                "```",  # 8
                "```bash",  # 9
                "echo not a runnable language",  # 10
                "```",  # 11
                "- a list item:",  # 12
                "  ```python",  # 13
                "  c = [",  # 14
                "      3]",  # 15
                "  ```",  # 16
                "````markdown",  # 17
                "```python",  # 18
                "shown, not run",  # 19
                "```",  # 20
                "````",  # 21
            ]
        ),
        "page.md",
    )
    assert doc.errors == []
    assert [(b.line, b.language, b.not_run) for b in doc.blocks] == [
        (2, "python", None),
        (6, "scala", "needs a real AWS account"),
        (13, "python", None),
    ]
    assert doc.blocks[2].code == "c = [\n    3]\n"
    assert [b.line for b in doc.runnable("python")] == [2, 13]
    assert doc.runnable("scala") == []


@pytest.mark.parametrize("marker", ["<!-- not run -->", "<!-- not run: -->", "<!--not run:   -->"])
def test_a_not_run_marker_without_a_reason_fails(marker: str) -> None:
    doc = parse(f"{marker}\n```python\nx = 1\n```\n", "page.md")
    assert doc.errors == ["page.md:1: a `not run` marker needs a reason: <!-- not run: <why this block cannot run> -->"]


def test_a_not_run_marker_away_from_a_block_fails_and_the_block_runs() -> None:
    doc = parse("<!-- not run: too far -->\n\n```python\nx = 1\n```\n", "page.md")
    assert doc.errors == [
        "page.md:1: a `not run` marker must be the line right before a ```python or ```scala opening fence"
    ]
    assert [b.line for b in doc.runnable("python")] == [3]


def test_an_unclosed_fence_fails() -> None:
    assert parse("text\n```python\nx = 1\n", "page.md").errors == [
        "page.md:2: the code fence opened here is never closed"
    ]


def test_checkpoints_the_blocks_name_are_cleared_only_when_spark_made_them(tmp_path: Path) -> None:
    checkpoint = Path(f"/tmp/docs-examples-test-{tmp_path.name}")
    mine = Path(f"/tmp/docs-examples-test-{tmp_path.name}-not-spark")
    try:
        (checkpoint / "offsets").mkdir(parents=True)
        (checkpoint / "metadata").write_text("{}")
        mine.mkdir()
        (mine / "notes.txt").write_text("keep me")
        code = f'q = df.writeStream.option("checkpointLocation", "{checkpoint}").start("{mine}")\n'
        removed = examples.clear_checkpoints(parse(f"```python\n{code}```\n", "page.md").blocks)
        assert removed == [str(checkpoint)]
        assert not checkpoint.exists()
        assert (mine / "notes.txt").read_text() == "keep me"
    finally:
        for path in (checkpoint, mine):
            if path.exists():
                shutil.rmtree(path)


def _doc(tmp_path: Path, name: str, text: str) -> Doc:
    page = tmp_path / name
    page.write_text(text)
    return examples.load(page)


PYTHON_PAGE = """\
# A page whose blocks fail in every way the runner must catch

```python
x = 20
```

<!-- not run: it would fail, and is skipped -->
```python
raise RuntimeError("a block marked not run ran")
```

```python
y = x + 1
raise ValueError(f"boom {y}")
```

```python
def fail(batch, batch_id):
    raise RuntimeError("the batch failed")

(spark.readStream.format("kinesis").option("streamName", "clicks").option("initialPosition", "trim_horizon")
    .load().writeStream.foreachBatch(fail).start())
```

```python
import json
# a region, no endpoint, no credentials: the harness's environment reaches the simulator and its `clicks`
rows = (spark.read.format("kinesis").option("streamName", "clicks").option("region", "eu-west-1")
        .option("initialPosition", "trim_horizon").load().collect())
assert len(rows) == x, len(rows)
assert sorted(json.loads(r.data)["user"] for r in rows)[0] == "u0"
assert spark.sql("SELECT count(*) AS n FROM read_kinesis(streamName => 'clicks', region => 'eu-west-1', "
                 "initialPosition => 'trim_horizon')").first().n == x
leaked = "from the first page"
```
"""


def test_python_failures_are_reported_with_their_lines_and_files_do_not_share_names(
    examples_runner: Runner, tmp_path: Path
) -> None:
    doc = _doc(tmp_path, "python-page.md", PYTHON_PAGE)
    result = examples_runner.run(doc, "python")
    print(result.log)
    assert result.blocks == 4
    assert [(f.location, f.block) for f in result.failures] == [(f"{doc.path}:14", 12), (f"{doc.path}:17", 17)], (
        result.report()
    )
    assert result.failures[0].message == "ValueError: boom 21"
    assert result.failures[1].message.startswith("streaming query ")
    assert "the batch failed" in result.failures[1].message
    assert f"{doc.path}:14 (block at line 12): ValueError: boom 21" in result.report()

    second = examples_runner.run(_doc(tmp_path, "second.md", "```python\nprint(leaked)\n```\n"), "python")
    assert [f.message for f in second.failures] == ["NameError: name 'leaked' is not defined"]


SCALA_PAGE = """\
```scala
val x = 20
```

```scala
val y: Int =
  "not an Int"
```

```scala
val z = x + 1
throw new IllegalStateException(s"boom $z")
```

```scala
val fail: (org.apache.spark.sql.DataFrame, Long) => Unit = (_, _) => throw new RuntimeException("the batch failed")
spark.readStream.format("kinesis").option("streamName", "clicks").option("initialPosition", "trim_horizon")
  .load().writeStream.foreachBatch(fail).start()
```

```scala
// a region, no endpoint, no credentials: the harness's environment reaches the simulator and its `clicks`
val n = spark.read.format("kinesis")
  .option("streamName", "clicks").option("region", "eu-west-1")
  .option("initialPosition", "trim_horizon")
  .load().count()
assert(n == x, s"$n records")
val leaked = "from the first page"
```
"""


def test_scala_failures_are_reported_with_their_lines_and_files_do_not_share_names(
    examples_runner: Runner, tmp_path: Path
) -> None:
    doc = _doc(tmp_path, "scala-page.md", SCALA_PAGE)
    result = examples_runner.run(doc, "scala")
    print(result.log)
    assert result.blocks == 5
    assert [(f.location, f.block) for f in result.failures] == [
        (f"{doc.path}:7", 5),
        (f"{doc.path}:10", 10),
        (f"{doc.path}:16", 15),
    ], result.report()
    assert f"{doc.path}:7: error: type mismatch" in result.failures[0].message
    assert "java.lang.IllegalStateException: boom 21" in result.failures[1].message
    assert "streaming query " in result.failures[2].message and "the batch failed" in result.failures[2].message

    second = examples_runner.run(_doc(tmp_path, "second.md", "```scala\nprintln(leaked)\n```\n"), "scala")
    assert len(second.failures) == 1 and "not found: value leaked" in second.failures[0].message, second.report()


def test_a_block_that_hangs_fails_at_the_deadline_and_the_next_file_gets_a_new_session(
    examples_runner: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(examples, "FILE_SECONDS_BASE", 5.0)
    monkeypatch.setattr(examples, "FILE_SECONDS_PER_BLOCK", 0.0)
    doc = _doc(tmp_path, "hangs.md", "```python\nx = 1\n```\n\n```python\nimport time\ntime.sleep(3600)\n```\n")
    result = examples_runner.run(doc, "python")
    assert [(f.location, f.message) for f in result.failures] == [
        (f"{doc.path}:5", "timed out while this block ran (the session is restarted)")
    ]
    monkeypatch.undo()
    after = examples_runner.run(
        _doc(tmp_path, "after.md", "```python\nassert spark.range(3).count() == 3\n```\n"), "python"
    )
    assert after.failures == [], after.report()
