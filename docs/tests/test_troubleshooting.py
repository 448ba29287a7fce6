"""docs/troubleshooting.md against the code: every error message the connector raises is on the page, and every
message the page quotes is still raised. The extraction and matching rules are in
docs/tools/troubleshooting_messages.py (its docstring says exactly what counts as a message)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "troubleshooting.md"


def _load_tool():
    path = ROOT / "docs" / "tools" / "troubleshooting_messages.py"
    spec = importlib.util.spec_from_file_location("troubleshooting_messages", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


tm = _load_tool()
Exclusion = tm.Exclusion

#: Messages of the code that are not on the page, each with why. ``match`` is a piece of the message as
#: ``Template.show()`` prints it (``*`` for an interpolation). An exclusion that matches nothing fails the test.
EXCLUSIONS = (
    Exclusion("a Databricks-only key is also ours", "checks the option tables when the class loads: a build bug"),
    Exclusion("an honoured key is not ours", "checks the option tables when the class loads: a build bug"),
    Exclusion("a Databricks-only key has no row", "checks the option tables when the class loads: a build bug"),
    Exclusion("two options share a key", "checks the option table when the class loads: a build bug"),
    Exclusion("Spark 3.5 has no byte limit", "never reached: maxBytesPerTrigger is refused when options are read"),
    Exclusion("was aborted", "raised only after Spark aborted the writer; the abort's own cause is the error"),
    Exclusion("a stream has at least one open shard", "ShardMap invariant: Kinesis always lists an open shard"),
    Exclusion("fetcher closed", "a stopping query closing its enhanced fan-out fetchers; nobody waits for it"),
    Exclusion("not a hash key range", "HashKeySpan invariant: ranges come from ListShards"),
    Exclusion("the Kinesis source is read with latestOffset(start, limit)", "Spark calls the other overload"),
    Exclusion("not a Kinesis partition offset", "Spark hands back the partition offsets the source made"),
    Exclusion("record * of *", "RecordBlock index check: an internal bug, not a user's error"),
    Exclusion("listing the shards of * was interrupted", "query.stop(): Spark takes it as the stop, not an error"),
    Exclusion("is already read to its end", "ShardReader invariant: a finished shard is never read again"),
    Exclusion("not a consumer ARN", "registeredConsumerId is validated as ARNs when the options are read"),
    Exclusion("unknown shard position tag", "SnapshotRequests invariant: a task reads what the same build wrote"),
    Exclusion(
        "a real-time Kinesis partition is read with nextWithTimeout", "Spark's real-time mode never calls next()"
    ),
)


def _python_argument_check(t) -> bool:
    # `<name> must ..., got <value>` from the shared argument checks: the page documents the shape.
    return (
        t.parts[0] is None
        and len(t.parts) > 1
        and str(t.parts[1]).startswith(" must ")
        and all(s.startswith("python/") for s in t.sites)
    )


#: Messages the page documents as a family (their shape and examples) instead of one by one.
FAMILIES = {
    # The `accepted` text of 'Invalid value ... for option ...: expected <accepted>.' (and of 'is required'),
    # one per option rule: the page shows the shape, with examples that are themselves checked.
    tm.OPTION_FAMILY: lambda t: t.family == tm.OPTION_FAMILY,
    "python-argument": _python_argument_check,
}


@pytest.fixture(scope="module")
def templates():
    return tm.read_sources(ROOT)


@pytest.fixture(scope="module")
def report(templates):
    return tm.check(templates, tm.page_messages(PAGE.read_text(encoding="utf-8")), EXCLUSIONS, FAMILIES)


def test_every_error_message_of_the_code_is_on_the_page(report):
    missing = [p for p in report.problems() if p.startswith("not on the page")]
    assert not missing, (
        "docs/troubleshooting.md misses these messages (add an entry, or an EXCLUSION with why):\n" + "\n".join(missing)
    )


def test_every_message_on_the_page_is_still_raised(report):
    stale = [p for p in report.problems() if p.startswith("page line")]
    assert not stale, "docs/troubleshooting.md quotes messages the code no longer has:\n" + "\n".join(stale)


def test_every_exclusion_still_matches_a_message(report):
    unused = [p for p in report.problems() if p.startswith("exclusion")]
    assert not unused, "\n".join(unused)


def test_the_extraction_finds_the_messages_the_page_is_about(templates):
    # A guard against an extraction that silently finds nothing (a changed source layout, a tokenizer bug).
    shown = {t.show() for t in templates if t.kind == "raise"}
    assert "Kinesis stream '*' not found in region * (endpoint *)" in shown
    assert "Invalid value '*' for option '*': expected *." in shown
    assert any(s.startswith("Real-time mode needs Spark 4.1 or later") for s in shown)
    assert any("no active SparkSession" in s for s in shown)
    assert len([t for t in templates if t.kind == "raise" and t.is_message]) > 100


# ---------------------------------------------------------------------------------------------------------------
# The rules themselves, on synthetic sources and pages: each check can fail.

SCALA = """
object Errors {
  // throw new IllegalStateException("a comment is not a message")
  def streamGone(stream: String) =
    throw new IllegalStateException(s"Stream $stream is gone: " +
      s"recreate it or read ${Seq("a", "b").mkString(", ")} instead")
  def check(n: Int): Unit = require(n > 0, s"n must be positive, got $n")
  def read(reader: OptionReader) = reader.fail(Opt, v, "an integer between two limits")
  val url = "http://example.com // not a comment"
  def lost(config: C, key: K) = DataLoss(config, key, s"position $p can no longer be read", "from the oldest record")
  def tiny = throw new IllegalStateException(s"$key: $e")
}
"""

PYTHON = '''
def f(name, value):
    """A docstring is not a message."""
    if value is None:
        raise ValueError(f"{name} must not be None, " "give a value")
    raise TypeError("a plain " + kind + " message here")
'''


def _templates():
    return tm.templates_from({"Errors.scala": SCALA, "f.py": PYTHON})


def _shown(kind="raise"):
    return {t.show() for t in _templates() if t.kind == kind and t.is_message}


def test_scala_messages_are_extracted_with_their_interpolations_as_wildcards():
    shown = _shown()
    assert "Stream * is gone: recreate it or read * instead" in shown  # nested quotes and braces, `+` across lines
    assert "n must be positive, got *" in shown  # require's second argument
    assert "an integer between two limits" in shown  # a helper's argument
    assert (
        "position * can no longer be read" in shown and "from the oldest record" in shown
    )  # DataLoss(_, _, lost, goingOn)
    assert not any("comment" in s for s in shown)  # comments skipped, a string holding // is not one
    assert not any(s.startswith("*: ") for s in shown)  # too little text to be a message


def test_python_messages_are_extracted_from_raise():
    shown = _shown()
    assert "* must not be None, give a value" in shown
    assert "a plain * message here" in shown
    assert not any("docstring" in s for s in _shown("text"))


def _check(page: str, exclusions=(), families=None):
    return tm.check(
        _templates(),
        tm.page_messages(page),
        exclusions,
        families or {tm.OPTION_FAMILY: lambda t: t.family == tm.OPTION_FAMILY},
    )


COMPLETE_PAGE = """
> `Stream <stream> is gone: recreate it or read <streams> instead`

> `n must be positive, got 0`

> `<name> must not be None, give a value`

> `a plain <kind> message here`

Data loss, with a fragment inside the message it is part of (what DataLoss adds around it is not in this source):

> `position <position> can no longer be read`

> `from the oldest record`
"""


def test_a_page_quoting_every_message_passes():
    assert _check(COMPLETE_PAGE).problems() == []


def test_a_message_missing_from_the_page_fails_naming_it():
    page = COMPLETE_PAGE.replace("> `n must be positive, got 0`\n", "")
    problems = _check(page).problems()
    assert len(problems) == 1 and "n must be positive, got *" in problems[0] and "Errors.scala:7" in problems[0]


def test_a_message_in_prose_does_not_count():
    page = COMPLETE_PAGE.replace("> `n must be positive, got 0`", "It fails with `n must be positive, got 0`.")
    assert any("n must be positive" in p for p in _check(page).problems())


def test_a_message_the_code_no_longer_raises_fails_naming_its_line():
    page = COMPLETE_PAGE + "\n> `Stream <stream> was renamed: read <streams> instead`\n"
    problems = _check(page).problems()
    assert len(problems) == 1 and problems[0].startswith("page line ") and "was renamed" in problems[0]


def test_changed_words_where_the_code_interpolates_fail():
    # One word may stand for a value; prose must come from the code.
    page = COMPLETE_PAGE.replace("got 0", "got a negative number from the user")
    assert any("page line" in p for p in _check(page).problems())


def test_a_family_member_need_not_be_quoted_but_a_quoted_example_is_checked():
    assert _check(COMPLETE_PAGE).problems() == []  # the helper's `accepted` text is not quoted above
    stale = _check(COMPLETE_PAGE + "\n> `an integer between three limits`\n").problems()
    assert stale and "page line" in stale[0]


def test_exclusions_remove_a_message_and_a_stale_one_fails():
    page = COMPLETE_PAGE.replace("> `n must be positive, got 0`\n", "")
    assert _check(page, [Exclusion("n must be positive", "test")]).problems() == []
    problems = _check(COMPLETE_PAGE, [Exclusion("no such message", "test")]).problems()
    assert problems == ["exclusion 'no such message' matches no message in the code any more: remove it"]


def test_quotes_inside_fenced_blocks_are_not_messages():
    page = COMPLETE_PAGE + "\n```text\n> `Stream <stream> was renamed`\n```\n"
    assert _check(page).problems() == []
