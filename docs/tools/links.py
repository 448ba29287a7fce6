"""The link check: every relative link and anchor of the docs resolves, as GitHub renders them.

Checked: inline links and images (`[text](path#anchor)`), reference definitions (`[ref]: path`) and HTML `href`/
`src` attributes, outside fenced code and code spans. A path must exist (file or folder) relative to the page; an
anchor must be a heading's GitHub slug in the target page (or the page itself for `#anchor`), or an explicit
`<a id="...">` / `<a name="...">`; on a file that is not markdown only GitHub's line anchors (`#L10`, `#L10-L20`)
are accepted. http(s), mailto and other scheme links are not fetched.

Links that leave the repository: only into the sibling `shared/` folder (the product contract, `../shared/SPEC.md`,
lives beside the repository in the project's workspace, not in it). Those are checked like any other link when that
folder exists, and left unchecked when it does not (a clone of the repository alone); on GitHub they do not
resolve. Any other link leaving the repository fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Outside the repository, links may point here only (see the module's docstring).
SHARED = REPO.parent / "shared"

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(?P<text>.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_ANCHOR_TAG = re.compile(r"""<a\s[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) and ![alt](target); the target may sit in <...>, a title may follow it.
_INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
_HTML_LINK = re.compile(r"""<(?:a|img)\s[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_LINE_ANCHOR = re.compile(r"^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$")


def github_slug(text: str) -> str:
    """The anchor GitHub gives a heading's text: lowercase, every character but letters, digits, `-`, `_` and
    spaces dropped (backticks and other punctuation included), each space a `-`. Duplicates are numbered by
    `slugs`, not here."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _rendered(heading: str) -> str:
    """A heading's text as GitHub renders it (the slug is made from that): links and images reduced to their
    text, HTML tags and emphasis markers removed, code spans kept as they are without their backticks."""
    parts = []
    for index, part in enumerate(re.split(r"(`+[^`]*`+)", heading)):
        if index % 2:
            parts.append(part.strip("`"))
            continue
        part = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", part)
        part = re.sub(r"<[^>]+>", "", part)
        parts.append(re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", part))
    return "".join(parts).strip()


def _outside_code(lines: list[str]) -> list[tuple[int, str]]:
    """(line number, line) of the lines outside fenced code blocks."""
    kept: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match[1]
                continue
            kept.append((number, line))
        elif match and match[1][0] == fence[0] and len(match[1]) >= len(fence) and line.strip().strip(fence[0]) == "":
            fence = None
    return kept


def _paragraph_line(line: str) -> bool:
    """Whether a `---`/`===` line under this one makes it a heading (not a table, list, quote or heading)."""
    return bool(line.strip()) and not _ATX.match(line) and not line.lstrip().startswith(("|", "-", "*", ">"))


def slugs(text: str) -> set[str]:
    """Every anchor a markdown page has on GitHub: its headings' slugs (a repeated slug gets -1, -2, ...) and
    the explicit `<a id>`/`<a name>` anchors."""
    lines = text.splitlines()
    outside = _outside_code(lines)
    found: set[str] = set()
    seen: dict[str, int] = {}
    previous: tuple[int, str] | None = None
    for number, line in outside:
        found.update(_ANCHOR_TAG.findall(line))
        heading = None
        atx = _ATX.match(line)
        if atx:
            heading = atx["text"]
        elif (
            _SETEXT.match(line) and previous is not None and previous[0] == number - 1 and _paragraph_line(previous[1])
        ):
            heading = previous[1].strip()
        previous = (number, line)
        if heading is None:
            continue
        slug = github_slug(_rendered(heading))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


@cache
def _anchors_of(path: Path) -> frozenset[str]:
    return frozenset(slugs(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Link:
    line: int
    target: str


def links(text: str) -> list[Link]:
    """The link targets of a page, with their lines."""
    found: list[Link] = []
    for number, line in _outside_code(text.splitlines()):
        line = _CODE_SPAN.sub(lambda m: " " * len(m[0]), line)
        targets = [m.strip("<>") for m in _INLINE.findall(line)] + _HTML_LINK.findall(line)
        reference = _REFERENCE.match(line)
        if reference:
            targets.append(reference[1].strip("<>"))
        found.extend(Link(number, t) for t in targets)
    return found


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check(page: Path, repo: Path = REPO, shared: Path = SHARED) -> list[str]:
    """The broken links of a page, each as "page:line: target: what is wrong"."""
    problems = []
    shown = page.relative_to(repo) if _inside(page.resolve(), repo.resolve()) else page
    for link in links(page.read_text(encoding="utf-8")):
        if _SCHEME.match(link.target) or link.target.startswith("//"):
            continue
        path_part, _, anchor = link.target.partition("#")
        target = (page.parent / path_part).resolve() if path_part else page.resolve()
        where = f"{shown}:{link.line}: {link.target}"
        if not _inside(target, repo.resolve()):
            if not _inside(target, shared.resolve()):
                problems.append(f"{where}: leaves the repository (only ../shared/ may be linked from outside it)")
                continue
            if not shared.is_dir():
                continue  # a clone without the project's shared folder: nothing to check against
        if not target.exists():
            problems.append(f"{where}: no such file or folder")
            continue
        if not anchor:
            continue
        if target.suffix.lower() == ".md" and target.is_file():
            if anchor not in _anchors_of(target):
                problems.append(f"{where}: no heading or <a id> with the anchor #{anchor} in {target.name}")
        elif not _LINE_ANCHOR.match(anchor):
            problems.append(f"{where}: #{anchor} is neither a markdown heading nor a line anchor (#L10)")
    return problems


def pages(repo: Path = REPO) -> list[Path]:
    """The pages the check covers: README.md, CONTRIBUTING.md, python/README.md and docs/**/*.md."""
    top = [repo / name for name in ("README.md", "CONTRIBUTING.md", "python/README.md") if (repo / name).is_file()]
    return top + sorted((repo / "docs").rglob("*.md"))
