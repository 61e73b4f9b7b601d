"""Every relative link of the README, SECURITY.md and the pages under ``docs/`` leads somewhere.

The README is short and sends readers to ``docs/`` for everything else, so a page renamed or a
heading reworded would leave a newcomer at a dead link. A link is checked as GitHub renders it:
the path is relative to the page holding it, and a ``#fragment`` must be the anchor GitHub makes
from one of the target page's headings. Links inside code (fenced blocks, inline spans) are text,
not links, and are skipped; links to other sites are not fetched.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import ROOT

#: The pages a reader follows links through.
PAGES = (ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md")))
#: ``[text](target)`` and ``![alt](target)``; an optional title after the target is dropped.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", flags=re.MULTILINE)


def prose(text: str) -> str:
    """The page without its code: fenced blocks and inline spans blanked, so their brackets are
    not read as links (a fenced block's ``# comment`` lines are not headings either)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped (letters, digits, ``_``
    and ``-`` kept), each space a ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a page; a repeated heading gets ``-1``, ``-2``, ... as GitHub numbers it."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = anchor(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def dead_links(page: Path) -> list[str]:
    """The links of ``page`` whose file or heading does not exist, each with why."""
    dead = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # another site (https:, mailto:)
        path, _, fragment = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            dead.append(f"{target}: no file {where}")
        elif fragment and where.suffix == ".md" and fragment not in anchors(where.read_text()):
            dead.append(f"{target}: {where.name} has no heading with the anchor #{fragment}")
    return dead


def test_every_relative_link_resolves() -> None:
    dead = {str(page.relative_to(ROOT)): links for page in PAGES if (links := dead_links(page))}
    assert not dead, dead


def test_the_readme_links_every_docs_page() -> None:
    """The README's documentation index is the way into ``docs/``: a page it does not list is lost."""
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in LINK.findall(prose((ROOT / "README.md").read_text()))}
    unlisted = [page.name for page in sorted((ROOT / "docs").glob("*.md")) if page.resolve() not in linked]
    assert not unlisted, f"add these pages to the README's Documentation list: {unlisted}"


def test_anchors_are_made_as_github_makes_them() -> None:
    assert anchor("verl's trainer config") == "verls-trainer-config"
    assert anchor("`resource_pools:` (verl)") == "resource_pools-verl"
    assert anchor("Back to verl: `export --to verl`") == "back-to-verl-export---to-verl"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_a_dead_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Here\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md#here) [gone](missing.md) [bad](there.md#nowhere) `[code](missing.md)` [web](https://x.org)\n")
    assert [line.split(":")[0] for line in dead_links(page)] == ["missing.md", "there.md#nowhere"]
