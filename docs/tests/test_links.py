"""Every relative link and anchor of README.md, CONTRIBUTING.md, python/README.md and docs/**/*.md resolves
(docs/tools/links.py says what is checked, and how links out of the repository are treated); then the checker's
own tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs.tools import links
from docs.tools.links import github_slug, slugs

PAGES = links.pages()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(links.REPO)) for p in PAGES])
def test_links_resolve(page: Path) -> None:
    problems = links.check(page)
    assert not problems, "\n".join(problems)


# --- the checker itself -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Quickstart: PySpark", "quickstart-pyspark"),
        ("Real-time mode (`Trigger.RealTime`, Spark 4.1+)", "real-time-mode-triggerrealtime-spark-41"),
        ("`read_kinesis`: the records", "read_kinesis-the-records"),
        ("A & B", "a--b"),  # each space becomes a hyphen, nothing is collapsed
        ("Don't panic — it's fine!", "dont-panic--its-fine"),
        ("snake_case and kebab-case", "snake_case-and-kebab-case"),
        ("Über Größe", "über-größe"),  # letters stay letters, lowercased
    ],
)
def test_github_slug(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


def test_slugs_of_a_page_number_duplicates_and_read_rendered_text() -> None:
    page = "\n".join(
        [
            "# Options",
            "## Options",
            "## Options",
            "### [Linked](other.md) **bold** heading",
            "Setext heading",
            "--------------",
            '<a id="custom-anchor"></a>',
            '<a name="old-name"></a>',
            "```bash",
            "# not a heading",
            "```",
        ]
    )
    assert slugs(page) == {
        "options",
        "options-1",
        "options-2",
        "linked-bold-heading",
        "setext-heading",
        "custom-anchor",
        "old-name",
    }


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    repo, shared = tmp_path / "repo", tmp_path / "shared"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "target.md").write_text("# Target page\n## A `code` section\n")
    (repo / "src.scala").write_text("object A\n")
    return repo, shared


def test_broken_links_and_anchors_are_reported_with_their_lines(tmp_path: Path) -> None:
    repo, shared = _repo(tmp_path)
    page = repo / "README.md"
    page.write_text(
        "\n".join(
            [
                "[ok](docs/target.md) [ok](docs/target.md#a-code-section) [ok](#here) ![img](src.scala)",  # 1
                "## Here",  # 2
                "[missing](docs/nope.md) [bad anchor](docs/target.md#no-such-section)",  # 3
                "[web](https://example.com/x#y) [mail](mailto:a@b.c) `[in code](nope.md)`",  # 4
                "[line](src.scala#L1-L2) [not a line](src.scala#top) [outside](../elsewhere/x.md)",  # 5
                '<a href="docs/missing.md">html</a>',  # 6
                "[ref]: docs/also-missing.md",  # 7
                "```",  # 8
                "[in a fence](nope.md)",  # 9
                "```",  # 10
            ]
        )
    )
    assert links.check(page, repo, shared) == [
        "README.md:3: docs/nope.md: no such file or folder",
        "README.md:3: docs/target.md#no-such-section: no heading or <a id> with the anchor #no-such-section in "
        "target.md",
        "README.md:5: src.scala#top: #top is neither a markdown heading nor a line anchor (#L10)",
        "README.md:5: ../elsewhere/x.md: leaves the repository (only ../shared/ may be linked from outside it)",
        "README.md:6: docs/missing.md: no such file or folder",
        "README.md:7: docs/also-missing.md: no such file or folder",
    ]


def test_links_into_the_shared_folder_are_checked_when_it_exists_and_skipped_when_not(tmp_path: Path) -> None:
    repo, shared = _repo(tmp_path)
    page = repo / "README.md"
    page.write_text("[spec](../shared/SPEC.md#3-sink) [gone](../shared/NOPE.md)\n")
    assert links.check(page, repo, shared) == []
    shared.mkdir()
    (shared / "SPEC.md").write_text("# 3. Sink\n")
    assert links.check(page, repo, shared) == ["README.md:1: ../shared/NOPE.md: no such file or folder"]
