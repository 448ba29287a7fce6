"""The error messages the connector raises, read from its sources, and the ones docs/troubleshooting.md quotes.

docs/tests/test_troubleshooting.py checks the two against each other; the rules live here so that a unit test can
run them on a synthetic source or page.

A message in the code is a *template*: constant text with a wildcard (``*``) wherever a value is interpolated or an
expression is passed. Templates come from these places, and only these:

Scala (``connector/src/main/**/*.scala``, every Spark line's folder):
  R1 the first argument of ``new <Name>Exception(...)`` (thrown, or completed exceptionally);
  R2 the second argument of ``require(condition, message)``;
  R3 the argument of a message helper (:data:`HELPERS`): a function whose argument becomes part of an exception's
     message elsewhere (``DataLoss(...)``'s what-is-lost, ``SinkErrors.badRecord``'s problem, ...);
  R4 the body of a message builder (:data:`MESSAGE_BUILDERS`): a value that becomes an exception's message
     where it is thrown (``StreamNotFound.message``, CallNaming's rewritten AWS message).
Python (``python/pyspark_kinesis/**/*.py``):
  R5 the first argument of ``raise <Exception>(...)``.

An argument's template is its string literals (``"..."``, ``s"..."``, ``f"..."``, ``\"\"\"...\"\"\"``, Python
f-strings and constants) joined by ``+`` in order; an interpolation (``$x``, ``${...}``, ``{...}``) or any other
operand is a wildcard. A template whose constant text has fewer than two words (of two letters or more) is not a
message (``s"$key: $e"``) and is left out.

Log lines (``logWarning``/``logInfo``/``log.warn``/``log.info``) are templates the page may quote as well (the
symptoms without an error), but the page need not cover them.

On the page, a message is the code span of a blockquote line: ``> `message` `` (see :func:`page_messages`).
``<anything>`` in it is a placeholder, as is a literal ``<...>`` in the code's text, so the two match.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: A wildcard part of a template.
WILD = None
#: What a placeholder (``<stream>`` on the page, or ``<region>`` in the code's own text) becomes before matching.
SENTINEL = "\x00"
_PLACEHOLDER = re.compile(r"<[A-Za-z_][^<>\n]{0,60}>")
_WORD = re.compile(r"[A-Za-z]{2,}")

Part = str | None


@dataclass(frozen=True)
class Helper:
    """A function whose argument ``arg`` (0-based) becomes part of an error message.

    ``receivers``: the call must be ``<receiver>.name(...)`` for one of them, or unqualified in one of ``home``'s
    files; empty ``receivers`` and ``home`` match every call of that name.
    ``family``: the messages form a family the page documents by its shape (the option-validation messages), so
    each template of it need not be quoted on the page.
    """

    name: str
    arg: int
    receivers: tuple[str, ...] = ()
    home: tuple[str, ...] = ()
    family: str | None = None


OPTION_FAMILY = "option-validation"

HELPERS: tuple[Helper, ...] = (
    # 'Invalid value ... for option ...: expected <accepted>.' and 'Option ... is required: set it to <accepted>.'
    Helper("fail", 2, ("reader",), ("OptionReader.scala",), OPTION_FAMILY),
    Helper("required", 1, ("reader",), ("OptionReader.scala",), OPTION_FAMILY),
    # 'Data loss in Kinesis stream ..., shard ...: <lost>. Set failOnDataLoss=false to ... go on <goingOn>.'
    Helper("DataLoss", 2),
    Helper("DataLoss", 3),
    Helper("badRecord", 1, ("SinkErrors",), ("SinkErrors.scala",)),
    Helper("schema", 0, ("SinkErrors",), ("SinkErrors.scala",)),
    # a KPL aggregate's inconsistency: 'user record <n> has no data', logged in OddAggregates' WARN line
    Helper("Malformed", 0, (), ("KplDeaggregator.scala",)),
    # 'Kinesis source offset is not in the expected format (<why>). ...'
    Helper("bad", 0, (), ("KinesisSourceOffset.scala",)),
    # 'Waited ... ms (registerConsumerTimeoutInterval) for enhanced fan-out <what>; giving up: ...'
    Helper("waitABit", 1, (), ("FanOutConsumers.scala",)),
)

#: ``def <name>(...) = <string>`` or ``val <name> = <string>``: the string is an exception's message where it is used.
MESSAGE_BUILDERS: dict[str, str] = {
    "message": "StreamNotFound.message, the one wording of a missing stream for the source and the sink",
    "named": "CallNaming's interceptor: the message every AWS error is given once the SDK's retries are over",
    "wrongCredentials": "ProxyRefusals' interceptor: a proxy's 407 to a call that sent credentials",
    "missingCredentials": "ProxyRefusals' interceptor: a proxy's 407 to a call that sent none",
    "tunnelRefusal": "ProxyRefusals' interceptor: a proxy's refusal of the fan-out client's CONNECT",
}

_LOG_CALLS = {"logWarning", "logInfo", "logError"}
_LOG_METHODS = {"warn", "info", "error"}


@dataclass
class Template:
    parts: tuple[Part, ...]
    kind: str  # "raise", "log" or "text" (any other string, used only to explain the page's text)
    sites: list[str] = field(default_factory=list)
    family: str | None = None

    @property
    def constant(self) -> str:
        return "".join(p for p in self.parts if p is not None)

    def show(self) -> str:
        return "".join("*" if p is None else p for p in self.parts).replace(SENTINEL, "<...>")

    @property
    def is_message(self) -> bool:
        return len(_WORD.findall(self.constant)) >= 2


# ---------------------------------------------------------------------------------------------------------------
# Templates


def normalise_text(s: str) -> str:
    """Whitespace runs become one space; placeholders the sentinel."""
    return _PLACEHOLDER.sub(SENTINEL, re.sub(r"\s+", " ", s))


def make_template(parts: Iterable[Part]) -> tuple[Part, ...]:
    """Adjacent constants joined, adjacent wildcards merged, whitespace and placeholders normalised."""
    out: list[Part] = []
    for p in parts:
        if p is None:
            if out and out[-1] is None:
                continue
            out.append(None)
        elif p:
            if out and out[-1] is not None:
                out[-1] = out[-1] + p
            else:
                out.append(p)
    return tuple(normalise_text(p) if p is not None else None for p in out)


# ---------------------------------------------------------------------------------------------------------------
# Scala


@dataclass
class _Tok:
    kind: str  # "str", "id", "op"
    text: str
    line: int
    parts: tuple[Part, ...] = ()


_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r", "b": "\b", "f": "\f"}
_FORMAT_SPEC = re.compile(r"%[-#+ 0,(]*\d*(?:\.\d+)?[a-zA-Z]")


def _skip_nested(src: str, i: int) -> int:
    """``src[i]`` is just after ``${``: the index after the matching ``}``, nested strings and braces skipped."""
    depth = 1
    while i < len(src) and depth:
        c = src[i]
        if c == '"':
            _, i = _read_string(src, i, None)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        i += 1
    return i


def _read_string(src: str, i: int, interpolator: str | None) -> tuple[tuple[Part, ...], int]:
    """``src[i]`` is the opening quote: the literal's parts and the index after it."""
    triple = src.startswith('"""', i)
    i += 3 if triple else 1
    interpolated = interpolator in ("s", "f")
    escapes = not triple and interpolator != "raw"
    parts: list[Part] = []
    buf: list[str] = []

    def flush() -> None:
        if buf:
            parts.append("".join(buf))
            buf.clear()

    while i < len(src):
        if triple:
            if src.startswith('"""', i) and not src.startswith('""""', i):
                i += 3
                break
        elif src[i] == '"':
            i += 1
            break
        c = src[i]
        if c == "\\" and escapes and i + 1 < len(src):
            buf.append(_ESCAPES.get(src[i + 1], src[i + 1]))
            i += 2
            continue
        if c == "$" and interpolated:
            nxt = src[i + 1] if i + 1 < len(src) else ""
            if nxt == "$":
                buf.append("$")
                i += 2
                continue
            if nxt == "{":
                flush()
                parts.append(WILD)
                i = _skip_nested(src, i + 2)
            elif _IDENT_START.match(nxt):
                flush()
                parts.append(WILD)
                i = _IDENT.match(src, i + 1).end()  # type: ignore[union-attr]
            else:
                buf.append(c)
                i += 1
                continue
            if interpolator == "f":
                spec = _FORMAT_SPEC.match(src, i)
                if spec:
                    i = spec.end()
            continue
        buf.append(c)
        i += 1
    flush()
    return tuple(parts), i


def scala_tokens(src: str) -> list[_Tok]:
    """Identifiers, string literals (as template parts) and single-character operators; comments dropped."""
    toks: list[_Tok] = []
    i, line = 0, 1
    n = len(src)
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            end = n if j < 0 else j + 2
            line += src.count("\n", i, end)
            i = end
        elif c == '"':
            parts, j = _read_string(src, i, None)
            toks.append(_Tok("str", src[i:j], line, parts))
            line += src.count("\n", i, j)
            i = j
        elif c == "'" and i + 2 < n and (src[i + 2] == "'" or (src[i + 1] == "\\" and i + 3 < n and src[i + 3] == "'")):
            i += 3 if src[i + 2] == "'" else 4  # a character literal
        elif _IDENT_START.match(c):
            m = _IDENT.match(src, i)
            assert m
            word = m.group()
            if m.end() < n and src[m.end()] == '"' and word in ("s", "f", "raw"):
                parts, j = _read_string(src, m.end(), word)
                toks.append(_Tok("str", src[i:j], line, parts))
                line += src.count("\n", i, j)
                i = j
            else:
                toks.append(_Tok("id", word, line))
                i = m.end()
        elif c.isdigit():
            m = re.compile(r"[0-9][0-9A-Za-z_.]*").match(src, i)
            assert m
            toks.append(_Tok("id", m.group(), line))
            i = m.end()
        else:
            toks.append(_Tok("op", c, line))
            i += 1
    return toks


_OPEN = {"(": ")", "[": "]", "{": "}"}


def _arguments(toks: list[_Tok], open_index: int) -> list[list[_Tok]]:
    """``toks[open_index]`` is ``(``: the tokens of each argument up to the matching ``)``."""
    args: list[list[_Tok]] = [[]]
    depth = 0
    for t in toks[open_index + 1 :]:
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
        elif t.kind == "op" and t.text in _OPEN.values():
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and t.kind == "op" and t.text == ",":
            args.append([])
            continue
        args[-1].append(t)
    return args


def _expression_parts(arg: list[_Tok]) -> tuple[Part, ...]:
    """The literals at the argument's top level in order; every other operand a wildcard."""
    parts: list[Part] = []
    depth = 0
    for t in arg:
        if t.kind == "op" and t.text in _OPEN:
            depth += 1
            parts.append(WILD)
        elif t.kind == "op" and t.text in _OPEN.values():
            depth -= 1
        elif depth == 0 and t.kind == "str":
            parts.extend(t.parts)
        elif depth == 0 and t.kind == "op" and t.text == "+":
            continue
        else:
            parts.append(WILD)
    return make_template(parts)


def _run_at(toks: list[_Tok], i: int) -> tuple[Part, ...]:
    """The run of literals joined by ``+`` that starts at ``toks[i]``."""
    return next(iter(_literal_runs(toks[i:], 0)))[1]


def _literal_runs(toks: list[_Tok], start: int) -> Iterable[tuple[int, tuple[Part, ...]]]:
    """Runs of string literals joined by ``+`` (e.g. a ``val`` spread over lines), from ``start``."""
    i = start
    while i < len(toks):
        if toks[i].kind != "str":
            i += 1
            continue
        first = i
        parts = list(toks[i].parts)
        while i + 2 < len(toks) and toks[i + 1].text == "+" and toks[i + 2].kind == "str":
            parts.extend(toks[i + 2].parts)
            i += 2
        yield first, make_template(parts)
        i += 1


def scala_templates(src: str, filename: str) -> list[Template]:
    """Every template of one Scala file (rules R1 to R4, log lines, and every other literal run as text)."""
    toks = scala_tokens(src)
    out: list[Template] = []

    def add(parts: tuple[Part, ...], kind: str, line: int, family: str | None = None) -> None:
        if any(p is not None for p in parts):
            out.append(Template(parts, kind, [f"{filename}:{line}"], family))

    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        prev = toks[i - 1] if i > 0 else None
        # R1: new [pkg.]XxxException(
        if t.kind == "id" and t.text == "new":
            j = i + 1
            while j + 1 < len(toks) and toks[j].kind == "id" and toks[j + 1].text == ".":
                j += 2
            if (
                j + 1 < len(toks)
                and toks[j].kind == "id"
                and toks[j].text.endswith("Exception")
                and toks[j + 1].text == "("
            ):
                args = _arguments(toks, j + 1)
                if args and args[0]:
                    add(_expression_parts(args[0]), "raise", t.line)
            continue
        if t.kind != "id" or nxt is None or nxt.text != "(":
            # R4: val named = "..."
            if (
                t.kind == "id"
                and t.text in MESSAGE_BUILDERS
                and prev is not None
                and prev.text == "val"
                and nxt is not None
                and nxt.text == "="
            ):
                if i + 2 < len(toks) and toks[i + 2].kind == "str":
                    add(_run_at(toks, i + 2), "raise", t.line)
            continue
        if prev is not None and prev.text == "def":
            # R4: def message(...): String = "..."
            if t.text in MESSAGE_BUILDERS:
                depth, j = 0, i + 1
                while j < len(toks):
                    if toks[j].text in _OPEN:
                        depth += 1
                    elif toks[j].text in _OPEN.values():
                        depth -= 1
                    elif depth == 0 and toks[j].text == "=":
                        break
                    j += 1
                if j + 1 < len(toks) and toks[j + 1].kind == "str":
                    add(_run_at(toks, j + 1), "raise", toks[j + 1].line)
            continue
        receiver = toks[i - 2].text if prev is not None and prev.text == "." and i >= 2 else None
        # R2: require(condition, message)
        if t.text == "require" and receiver is None:
            args = _arguments(toks, i + 1)
            if len(args) > 1:
                add(_expression_parts(args[1]), "raise", t.line)
            continue
        # R3: message helpers
        for h in HELPERS:
            if t.text != h.name:
                continue
            if h.receivers or h.home:
                ok = (receiver in h.receivers) if receiver is not None else (Path(filename).name in h.home)
                if not ok:
                    continue
            args = _arguments(toks, i + 1)
            if len(args) > h.arg:
                add(_expression_parts(args[h.arg]), "raise", t.line, h.family)
        # Log lines
        if (t.text in _LOG_CALLS and receiver is None) or (t.text in _LOG_METHODS and receiver == "log"):
            args = _arguments(toks, i + 1)
            if args and args[0]:
                add(_expression_parts(args[0]), "log", t.line)
    for index, parts in _literal_runs(toks, 0):
        add(parts, "text", toks[index].line)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Python


def _py_parts(node: ast.AST) -> list[Part]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        parts: list[Part] = []
        for v in node.values:
            parts.extend(_py_parts(v) if isinstance(v, ast.Constant) else [WILD])
        return parts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _py_parts(node.left) + _py_parts(node.right)
    return [WILD]


def python_templates(src: str, filename: str) -> list[Template]:
    """R5, and every other string expression as text (docstrings left out)."""
    tree = ast.parse(src)
    out: list[Template] = []
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            parts = make_template(_py_parts(node.exc.args[0]))
            if any(p is not None for p in parts):
                out.append(Template(parts, "raise", [f"{filename}:{node.lineno}"]))
        if isinstance(node, (ast.JoinedStr, ast.BinOp)):
            for child in ast.walk(node):
                if child is not node:
                    inner.add(id(child))
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in inner:
            continue
        is_str = isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))
        is_concat = (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and any(isinstance(c, (ast.JoinedStr, ast.Constant)) for c in ast.walk(node))
        )
        if is_str or is_concat:
            parts = make_template(_py_parts(node))
            if any(p is not None for p in parts):
                out.append(Template(parts, "text", [f"{filename}:{getattr(node, 'lineno', 0)}"]))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Sources


def merge(templates: Iterable[Template]) -> list[Template]:
    """One template per (parts, kind), with every site it comes from."""
    by_key: dict[tuple[tuple[Part, ...], str], Template] = {}
    for t in templates:
        key = (t.parts, t.kind)
        if key in by_key:
            by_key[key].sites.extend(t.sites)
            by_key[key].family = by_key[key].family or t.family
        else:
            by_key[key] = Template(t.parts, t.kind, list(t.sites), t.family)
    return list(by_key.values())


def read_sources(root: Path) -> list[Template]:
    """Every template of the connector's Scala sources and the Python package."""
    templates: list[Template] = []
    for path in sorted((root / "connector" / "src" / "main").rglob("*.scala")):
        templates += scala_templates(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
    for path in sorted((root / "python" / "pyspark_kinesis").rglob("*.py")):
        templates += python_templates(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
    return merge(templates)


# ---------------------------------------------------------------------------------------------------------------
# The page

_QUOTE_SPAN = re.compile(r"^\s*>\s?(`+)(.+?)\1\s*$")


@dataclass(frozen=True)
class PageMessage:
    text: str  # as written on the page
    line: int

    @property
    def normalised(self) -> str:
        return normalise_text(self.text).strip()


def page_messages(markdown: str) -> list[PageMessage]:
    """The messages a page quotes: each blockquote line that is exactly one code span (``> `...` ``).

    Fenced code blocks are skipped. Messages written inline in prose (Spark's or AWS's own) are not checked.
    """
    out: list[PageMessage] = []
    fenced = False
    for number, line in enumerate(markdown.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = _QUOTE_SPAN.match(line)
        if m:
            body = m.group(2)
            if body.startswith(" ") and body.endswith(" ") and body.strip():
                body = body[1:-1]
            out.append(PageMessage(body, number))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Matching


def template_regex(parts: Sequence[Part]) -> re.Pattern[str]:
    """Where a template occurs in a text: its constants literally, a wildcard any text."""
    return re.compile("".join(".*?" if p is None else re.escape(p) for p in parts), re.DOTALL)


class Matcher:
    """Whether a page's message is the code's: a template matches it whole, and the text its wildcards take is
    either one word (a value: a name, a number, a placeholder) or, in turn, matched whole by a template."""

    def __init__(self, templates: Sequence[Template]) -> None:
        self.templates = [t for t in templates if t.constant.strip()]
        self._explained: dict[str, bool] = {}

    @staticmethod
    def _anchors(t: Template) -> tuple[str, str, str]:
        first = t.parts[0] if t.parts[0] is not None else ""
        last = t.parts[-1] if t.parts[-1] is not None else ""
        longest = max((p for p in t.parts if p is not None), key=len)
        return first, last, longest

    def _candidates(self, text: str, pool: Sequence[Template]) -> Iterable[Template]:
        for t in pool:
            first, last, longest = self._anchors(t)
            if text.startswith(first) and text.endswith(last) and longest in text:
                yield t

    def explained(self, span: str) -> bool:
        span = span.strip()
        if " " not in span:
            return True
        if span in self._explained:
            return self._explained[span]
        self._explained[span] = False  # a span being explained does not explain itself
        result = any(self.matches_whole(t, span) for t in self._candidates(span, self.templates))
        self._explained[span] = result
        return result

    def matches_whole(self, t: Template, text: str) -> bool:
        parts = t.parts
        memo: dict[tuple[int, int], bool] = {}

        def go(i: int, pos: int) -> bool:
            key = (i, pos)
            if key in memo:
                return memo[key]
            if i == len(parts):
                result = pos == len(text)
            elif parts[i] is not None:
                p = parts[i]
                assert p is not None
                result = text.startswith(p, pos) and go(i + 1, pos + len(p))
            elif i + 1 == len(parts):
                result = self.explained(text[pos:])
            else:
                nxt = parts[i + 1]
                assert nxt is not None
                result = False
                q = text.find(nxt, pos)
                while q >= 0:
                    if self.explained(text[pos:q]) and go(i + 1, q):
                        result = True
                        break
                    q = text.find(nxt, q + 1)
            memo[key] = result
            return result

        return go(0, 0)

    def source_of(self, message: str, pool: Sequence[Template]) -> Template | None:
        """The template of ``pool`` that ``message`` (normalised) is, if any."""
        for t in self._candidates(message, pool):
            if self.matches_whole(t, message):
                return t
        return None


@dataclass(frozen=True)
class Exclusion:
    """A message left off the page: ``match`` is a piece of its template as :meth:`Template.show` prints it (an
    interpolation is ``*``)."""

    match: str
    reason: str


@dataclass
class Report:
    uncovered: list[Template]
    stale: list[PageMessage]
    unused_exclusions: list[Exclusion]

    def problems(self) -> list[str]:
        out = []
        for t in self.uncovered:
            out.append(f"not on the page: {t.show()!r} ({', '.join(t.sites)})")
        for m in self.stale:
            out.append(f"page line {m.line}: no longer raised by the code: {m.text!r}")
        for e in self.unused_exclusions:
            out.append(f"exclusion {e.match!r} matches no message in the code any more: remove it")
        return out


def check(
    templates: Sequence[Template],
    messages: Sequence[PageMessage],
    exclusions: Sequence[Exclusion],
    families: Mapping[str, Callable[[Template], bool]],
) -> Report:
    """(a) every message template of the code occurs in a message the page quotes, unless excluded or a member of
    a family (``families``: name -> membership); (b) every message the page quotes is raised (or logged) by the
    code; and no exclusion is stale."""
    raised = [t for t in templates if t.kind == "raise" and t.is_message]
    quotable = raised + [t for t in templates if t.kind == "log" and t.is_message]
    used: set[Exclusion] = set()

    def excluded(t: Template) -> bool:
        hits = [e for e in exclusions if normalise_text(e.match) in t.show()]
        used.update(hits)
        return bool(hits)

    normalised = [m.normalised for m in messages]
    uncovered = []
    for t in raised:
        if excluded(t) or any(member(t) for member in families.values()):
            continue
        pattern = template_regex(t.parts)
        if not any(pattern.search(m) for m in normalised):
            uncovered.append(t)
    matcher = Matcher(templates)
    stale = [m for m in messages if matcher.source_of(m.normalised, quotable) is None]
    unused = [e for e in exclusions if e not in used]
    return Report(sorted(uncovered, key=lambda t: t.sites[0]), stale, unused)


def templates_from(sources: dict[str, str]) -> list[Template]:
    """Templates of in-memory files by name (``.scala`` or ``.py``), for tests on synthetic sources."""
    out: list[Template] = []
    for name, src in sources.items():
        out += scala_templates(src, name) if name.endswith(".scala") else python_templates(src, name)
    return merge(out)
