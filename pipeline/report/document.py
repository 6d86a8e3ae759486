"""A report as a document, and its two layouts: sections of text, tables and figures (Section,
Table), laid out as Markdown (``markdown``, with links to GitHub's anchors of its headings) and
as one HTML page with its SVG figures inline (``page``, no server and no network needed; it
fits a phone's width: wide tables scroll within their box). Every report of the project (a
study's, a ladder's, an atlas's) is one Document; pipeline.report.folder writes it to disk.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.report import figures as plot


@dataclass
class Table:
    """A table as the reader sees it: formatted cells; ``name`` is its CSV (full precision)."""

    caption: str
    header: list[str]
    rows: list[list[str]]
    name: str | None = None


@dataclass
class Section:
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)  # (file stem, caption)
    appendix: bool = False  # full tables: after the main sections, under one heading "Appendix"


_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
/* The page is as wide as a wide table needs (80rem); prose keeps a readable measure. */
body {{ font-family: system-ui, sans-serif; line-height: 1.45; max-width: 80rem; margin: 2rem auto; padding: 0 1rem;
  color: #222; overflow-wrap: break-word; }}
p, h1, h2, h3, figcaption, .abstract, .contents, .alarm, footer {{ max-width: 52rem; }}
h1 {{ font-size: 1.7rem; line-height: 1.2; }}
h2 {{ margin-top: 2.4rem; padding-bottom: 0.2rem; border-bottom: 1px solid #ddd; }}
h3 {{ margin-top: 1.8rem; }}
a {{ color: #0060a0; }}
.abstract {{ background: #f2f6fa; border-left: 4px solid #0072b2; padding: 0.1rem 1.2rem 0.3rem; margin: 1.2rem 0 1.5rem; }}
.abstract h2, .contents h2 {{ font-size: 1.05rem; margin: 0.8rem 0 0.4rem; border: 0; padding: 0; }}
.contents ol {{ margin: 0; padding-left: 1.6rem; }} .contents li {{ margin: 0.1rem 0; }}
/* A table too wide for the screen scrolls in its box, with a shadow on the side that has more
   columns (the white covers move with the table, the shadows stay at the box's edges). */
.scroll {{ overflow-x: auto; margin: 0.5rem 0 1.5rem;
  background: linear-gradient(to right, #fff 30%, #fff0) left / 2.5rem 100% no-repeat local,
    linear-gradient(to left, #fff 30%, #fff0) right / 2.5rem 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, #0003, #0000) left / 0.9rem 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, #0003, #0000) right / 0.9rem 100% no-repeat scroll; }}
/* No cell wraps (an interval stays on one line) but those of a column of sentences; a header
   wraps between its words, so it never makes its column wider than its numbers. The caption
   wraps within the screen's width. */
table {{ border-collapse: collapse; font-size: 0.8rem; font-variant-numeric: tabular-nums; }}
th, td {{ padding: 0.2rem 0.45rem; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }}
th {{ vertical-align: bottom; white-space: normal; }} td {{ vertical-align: baseline; }}
.words {{ text-align: left; }}
.prose {{ white-space: normal; min-width: 16rem; }}
caption {{ max-width: calc(100vw - 2rem); text-align: left; font-weight: bold; padding-bottom: 0.3rem; }}
figure {{ margin: 1rem 0 1.5rem; }}
.plot {{ overflow-x: auto; }}
.plot svg {{ display: block; max-width: 100%; height: auto; }}
/* A figure of known size follows the column's width between 3/4 of its size (its 7 pt type stays
   above 7 px; a narrower column scrolls it sideways) and 3/2 (a one-column figure is not blown up). */
.sized svg {{ width: 100%; min-width: calc(0.75 * var(--size)); max-width: calc(1.5 * var(--size)); }}
figcaption {{ font-size: 0.85rem; color: #555; }}
.alarm {{ border: 2px solid #b00000; padding: 0 0.8rem; margin: 1rem 0; }}
footer {{ margin-top: 3rem; padding-top: 0.4rem; border-top: 1px solid #ccc; font-size: 0.8rem; color: #555; }}
@media print {{
  body {{ max-width: none; margin: 0; padding: 0; font-size: 10pt; color: #000; }}
  .contents {{ display: none; }}
  .scroll, .plot {{ overflow: visible; }} .sized svg {{ min-width: 0; }}
  h2, h3 {{ break-after: avoid; }} figure, tr, .abstract, .alarm {{ break-inside: avoid; }}
  a {{ color: inherit; text-decoration: none; }}
}}
</style>
</head>
<body>
{body}
</body>
</html>
"""
_ALARM_RED = "#b00000"  # the alarm of a possible bug: sampled figures far from their exact values
# A link of the report's text, [words](target), as Markdown writes it.
_LINK = re.compile(r"\[([^\[\]]+)\]\(([^()\s]+)\)")
# The ids of the headings the report itself adds: no section's anchor may take them.
_ABSTRACT, _CONTENTS, _APPENDIX = "abstract", "contents", "appendix"
# An SVG's width in points, as matplotlib writes it.
_SVG_WIDTH = re.compile(r'<svg[^>]*?\swidth="([0-9.]+)pt"')
# A cell that reads as a number ("-0.5", "< 0.001"): its column is right-aligned unless a cell
# of it holds words; "n/a" and an empty cell go either way. A cell longer than _PROSE is a
# sentence: its column may wrap.
_NUMBER = re.compile(r"[-+−<>≤≥]?\s?[0-9]")
_EITHER = ("n/a", "")
_PROSE = 40
# Where a long name in a header may break: after an underscore, or between a lower-case letter
# and a capital (BranchingFactor_per_turn -> Branching Factor_ per_ turn).
_NAME_BREAK = re.compile(r"(?<=_)(?=\w)|(?<=[a-z])(?=[A-Z])")
# Inline code of the report's text, `words`, as Markdown writes it.
_CODE = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Document:
    """What a report's Markdown and HTML lay out, in this order: the title, the alarm, the
    abstract, the text, the contents, the sections (those of the appendix last) and the footer."""

    title: str
    text: Sequence[str]
    sections: Sequence[Section]
    alarm: Sequence[str] = ()
    abstract: Sequence[str] = ()
    footer: Sequence[str] = ()


def markdown(document: Document) -> str:
    main, appendix = _outline(document.sections)
    lines = [f"# {document.title}", "", *_paragraphs([f"**{paragraph}**" for paragraph in document.alarm])]
    if document.abstract:
        lines += ["## Abstract", "", *_paragraphs(document.abstract)]
    lines += [*_paragraphs(document.text), *_markdown_contents(main, appendix)]
    for section, _ in main:
        lines += [f"## {section.title}", "", *_markdown_section(section)]
    if appendix:
        lines += ["## Appendix", ""]
    for section, _ in appendix:
        lines += [f"### {section.title}", "", *_markdown_section(section)]
    if document.footer:
        lines += ["---", "", *_paragraphs(document.footer)]
    return "\n".join(lines)


def _markdown_contents(main: _Anchored, appendix: _Anchored) -> list[str]:
    if not main and not appendix:
        return []
    lines = ["## Contents", "", *(f"- [{section.title}](#{anchor})" for section, anchor in main)]
    if appendix:
        lines += [f"- [Appendix](#{_APPENDIX})", *(f"  - [{section.title}](#{anchor})" for section, anchor in appendix)]
    return [*lines, ""]


def _markdown_section(section: Section) -> list[str]:
    lines = _paragraphs(section.text)
    for stem, caption in section.figures:
        lines += [
            f"![{caption}](figures/{stem}.svg)",
            "",
            f"*{caption}*" + (f" ({links})" if (links := _markdown_links(stem)) else ""),
            "",
        ]
    for table in section.tables:
        source = f" (tables/{table.name}.csv)" if table.name else ""
        lines += [f"**{table.caption}**{source}", "", _markdown_table(table), ""]
    return lines


def page(document: Document, figure_folder: Path) -> str:
    main, appendix = _outline(document.sections)
    body = [f"<h1>{html.escape(document.title)}</h1>"]
    if document.alarm:  # a possible bug: red, before anything else
        paragraphs = "".join(f"<p><strong>{html.escape(paragraph)}</strong></p>" for paragraph in document.alarm)
        body.append(f'<div class="alarm" role="alert" style="color: {_ALARM_RED}">{paragraphs}</div>')
    if document.abstract:
        paragraphs = "".join(_html_paragraph(paragraph) for paragraph in document.abstract)
        body.append(f'<section class="abstract" id="{_ABSTRACT}"><h2>Abstract</h2>{paragraphs}</section>')
    body += [_html_paragraph(paragraph) for paragraph in document.text]
    body += _html_contents(main, appendix)
    body += [_html_section(section, anchor, "h2", figure_folder) for section, anchor in main]
    if appendix:
        parts = "\n".join(_html_section(section, anchor, "h3", figure_folder) for section, anchor in appendix)
        body.append(f'<section class="appendix" id="{_APPENDIX}">\n<h2>Appendix</h2>\n{parts}\n</section>')
    if document.footer:
        body.append("<footer>" + "".join(_html_paragraph(paragraph) for paragraph in document.footer) + "</footer>")
    return _HTML.format(title=html.escape(document.title), body="\n".join(body))


def _html_contents(main: _Anchored, appendix: _Anchored) -> list[str]:
    if not main and not appendix:
        return []
    items = [_html_link(section.title, anchor) for section, anchor in main]
    if appendix:
        inner = "".join(f"<li>{_html_link(section.title, anchor)}</li>" for section, anchor in appendix)
        items.append(f"{_html_link('Appendix', _APPENDIX)}<ol>{inner}</ol>")
    entries = "".join(f"<li>{item}</li>" for item in items)
    return [f'<nav class="contents" id="{_CONTENTS}" aria-label="Contents"><h2>Contents</h2><ol>{entries}</ol></nav>']


def _html_link(title: str, anchor: str) -> str:
    return f'<a href="#{anchor}">{html.escape(title)}</a>'


def _html_section(section: Section, anchor: str, heading: str, figure_folder: Path) -> str:
    body = [f'<section id="{anchor}">', f"<{heading}>{html.escape(section.title)}</{heading}>"]
    body += [_html_paragraph(paragraph) for paragraph in section.text]
    body += [_html_figure(stem, caption, figure_folder) for stem, caption in section.figures]
    body += [_html_table(table) for table in section.tables]
    return "\n".join([*body, "</section>"])


def _html_figure(stem: str, caption: str, figure_folder: Path) -> str:
    svg = (figure_folder / f"{stem}.svg").read_text(encoding="utf-8")
    svg = svg[svg.index("<svg") :]
    width = _SVG_WIDTH.search(svg)
    box = f'class="plot sized" style="--size: {width.group(1)}pt"' if width else 'class="plot"'
    return f"<figure><div {box}>{svg}</div><figcaption>{html.escape(caption)} {_html_links(stem)}</figcaption></figure>"


def _other_formats() -> list[str]:
    """The formats beside the SVG each figure is saved in (pipeline.report.figures.formats)."""
    return [suffix for suffix in plot.formats() if suffix != "svg"]


def _markdown_links(stem: str) -> str:
    return ", ".join(f"[{suffix.upper()}](figures/{stem}.{suffix})" for suffix in _other_formats())


def _html_links(stem: str) -> str:
    return " ".join(f'<a href="figures/{stem}.{suffix}">{suffix.upper()}</a>' for suffix in _other_formats())


# Sections paired with the anchors of their headings, main sections and the appendix's apart.
_Anchored = list[tuple[Section, str]]


def _outline(sections: Sequence[Section]) -> tuple[_Anchored, _Anchored]:
    """The main sections and those of the appendix, in the report's order, each with the anchor
    of its heading: GitHub's (lower case, punctuation dropped, spaces to hyphens, a repeat
    numbered), which is also its id in the HTML."""
    ordered = [section for section in sections if not section.appendix] + [section for section in sections if section.appendix]
    used = {_ABSTRACT, _CONTENTS, _APPENDIX}
    anchored = [(section, _unique(_slug(section.title), used)) for section in ordered]
    main = [(section, anchor) for section, anchor in anchored if not section.appendix]
    return main, anchored[len(main) :]


def _slug(title: str) -> str:
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-") or "section"


def _unique(slug: str, used: set[str]) -> str:
    """``slug``, or ``slug-1``, ``slug-2``... if it is taken; then taken."""
    candidate, repeat = slug, 0
    while candidate in used:
        repeat += 1
        candidate = f"{slug}-{repeat}"
    used.add(candidate)
    return candidate


def _markdown_table(table: Table) -> str:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "|".join("---" for _ in table.header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in table.rows]
    return "\n".join(lines)


def _html_table(table: Table) -> str:
    classes = _column_classes(table)
    head = _html_cells("th", table.header, classes)
    rows = "".join(f"<tr>{_html_cells('td', row, classes)}</tr>" for row in table.rows)
    source = f" (tables/{table.name}.csv)" if table.name else ""
    caption = f"<caption>{html.escape(table.caption + source)}</caption>"
    # Wide tables scroll inside their box, so the page keeps the width of a phone's screen.
    return f'<div class="scroll"><table>{caption}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def _html_cells(tag: str, cells: Sequence[str], classes: Sequence[str]) -> str:
    """A row's cells, each with its column's class; `code` in them as in a paragraph."""
    opening = [
        f'<{tag} class="{classes[column]}">' if column < len(classes) and classes[column] else f"<{tag}>"
        for column in range(len(cells))
    ]
    texts = [_code(html.escape(cell)) for cell in cells]
    if tag == "th":  # where a table lacks room, a header may wrap inside a long name: BranchingFactor_per_turn
        texts = [_NAME_BREAK.sub("<wbr>", text) if "<code>" not in text else text for text in texts]
    return "".join(f"{start}{text}</{tag}>" for start, text in zip(opening, texts, strict=True))


def _column_classes(table: Table) -> list[str]:
    """Each column's class: "words" (left-aligned: South, North, strategy) if a cell of it holds
    words, not a number, "words prose" (it may wrap) if one holds a sentence; none (numbers,
    right-aligned) otherwise."""
    return [_column_class([row[column] for row in table.rows if column < len(row)]) for column in range(len(table.header))]


def _column_class(cells: Sequence[str]) -> str:
    if not any(cell not in _EITHER and not _NUMBER.match(cell) for cell in cells):
        return ""
    return "words prose" if any(len(cell) > _PROSE for cell in cells) else "words"


def _html_paragraph(text: str) -> str:
    """A paragraph of the report's text in HTML: **bold**, [links](target) and `code`, the rest
    escaped."""
    escaped = _code(_LINK.sub(r'<a href="\2">\1</a>', html.escape(text)))
    parts = escaped.split("**")
    return "<p>" + "".join(f"<strong>{part}</strong>" if i % 2 else part for i, part in enumerate(parts)) + "</p>"


def _code(escaped: str) -> str:
    """`code` in escaped text as HTML."""
    return _CODE.sub(r"<code>\1</code>", escaped)


def _paragraphs(texts: Sequence[str]) -> list[str]:
    return [line for text in texts for line in (text, "")]
