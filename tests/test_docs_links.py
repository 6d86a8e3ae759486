"""The README and docs/ hold together.

Every relative link of README.md and docs/*.md, ``[text](target)`` with an optional
``#anchor``, reaches a file or folder of the repository, and an anchor into a Markdown file
is one of its headings as GitHub spells it. README.md links to every page of docs/, stays
short (at most 150 lines) and names the two commands on its first screen (80 lines).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from locations import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

README_MAX_LINES = 150
FIRST_SCREEN_LINES = 80
TWO_COMMANDS = ("make study", "make test")

FENCED = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
# [text](target) or ![alt](target "title"); the text may hold one level of brackets.
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
LINK_TEXT = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def prose(path: Path) -> str:
    """The text of a Markdown file with its fenced code blocks and code spans blanked out."""
    text = FENCED.sub("", path.read_text(encoding="utf-8"))
    return CODE_SPAN.sub("", text)


def relative_links(path: Path) -> list[str]:
    """The targets of the file's links that point into the repository (no scheme)."""
    return [target for target in LINK.findall(prose(path)) if not SCHEME.match(target)]


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text, lowercased, spaces to '-', no punctuation but '-' and '_'."""
    text = LINK_TEXT.sub(r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file; a repeated slug gets -1, -2, ... as on GitHub."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in HEADING.findall(FENCED.sub("", path.read_text(encoding="utf-8"))):
        slug = github_slug(heading)
        found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return found


def resolve(page: Path, target: str) -> tuple[Path, str]:
    """The file a link of ``page`` names (the page itself for a bare #anchor) and its anchor."""
    location, _, anchor = target.partition("#")
    return ((page.parent / location).resolve() if location else page), anchor


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_slugs_are_githubs():
    assert github_slug("How long, here") == "how-long-here"
    assert github_slug("The engine in `Python` (API)") == "the-engine-in-python-api"
    assert github_slug("Seeds, bit-for-bit & snake_case") == "seeds-bit-for-bit--snake_case"
    assert github_slug("[RULES.md](RULES.md) first") == "rulesmd-first"


def test_there_are_pages_to_check():
    assert README.is_file()
    assert len(PAGES) > 1, "docs/ holds the pages the README links to"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_relative_link_reaches_a_file_of_the_repository(page):
    broken = []
    for target in relative_links(page):
        path, _ = resolve(page, target)
        if not path.is_relative_to(ROOT) or not path.exists():
            broken.append(target)
    assert broken == [], f"{name(page)} links to what the repository does not hold"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_anchor_into_a_markdown_file_is_one_of_its_headings(page):
    broken = []
    for target in relative_links(page):
        path, anchor = resolve(page, target)
        if anchor and path.suffix == ".md" and path.is_file() and anchor not in anchors(path):
            broken.append(target)
    assert broken == [], f"{name(page)} links to headings that do not exist"


def test_the_readme_links_to_every_page_of_docs():
    linked = {resolve(README, target)[0] for target in relative_links(README)}
    missing = [name(page) for page in sorted(DOCS.glob("*.md")) if page.resolve() not in linked]
    assert missing == []


def test_the_readme_is_short_and_its_first_screen_gives_the_two_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
    first_screen = "\n".join(lines[:FIRST_SCREEN_LINES])
    for command in TWO_COMMANDS:
        assert command in first_screen, f"README's first {FIRST_SCREEN_LINES} lines do not name {command!r}"
