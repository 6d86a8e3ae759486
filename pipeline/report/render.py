"""The report on disk: its Markdown and HTML, its CSV tables and figures, and the folder's safety.

The report is built in a staging folder beside its own and moved into place whole, so a
failure never leaves half a report over a good one. Every report's folder holds a marker
(MARKER, a line of JSON: the study's name and the engine's version), and a report replaces
only a folder that is empty or holds a report of ours and nothing else: never the study's
folder, nor a folder of the user's files.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import polars as pl

from engine.version import ENGINE_VERSION
from pipeline import figures as plot
from pipeline.records import RecordError
from pipeline.report.figures import draw
from pipeline.report.sections import Report, Section, Table
from pipeline.report.tables import ReportData

MARKER = ".modiar-report"  # in every report's folder, JSON: only a folder holding it is ever replaced


def markdown(report: Report) -> str:
    """The report as Markdown, its figures linked from figures/; its alarm first, in bold."""
    return _markdown(f"Study report: {report.study}", report.text, report.sections, report.alarm)


def page(report: Report, figure_folder: Path) -> str:
    """The report as one HTML file with its SVG figures inline (no server, no network); its
    alarm first, in red."""
    return _page(f"Study report: {report.study}", report.text, report.sections, figure_folder, report.alarm)


def _markdown(title: str, text: Sequence[str], sections: Sequence[Section], alarm: Sequence[str] = ()) -> str:
    lines = [f"# {title}", "", *_paragraphs([f"**{paragraph}**" for paragraph in alarm]), *_paragraphs(text)]
    for section in sections:
        lines += [f"## {section.title}", "", *_paragraphs(section.text)]
        for stem, caption in section.figures:
            lines += [
                f"![{caption}](figures/{stem}.svg)",
                "",
                f"*{caption}* ([PDF](figures/{stem}.pdf), [PNG](figures/{stem}.png))",
                "",
            ]
        for table in section.tables:
            source = f" (tables/{table.name}.csv)" if table.name else ""
            lines += [f"**{table.caption}**{source}", "", _markdown_table(table), ""]
    return "\n".join(lines)


def _page(title: str, text: Sequence[str], sections: Sequence[Section], figure_folder: Path, alarm: Sequence[str] = ()) -> str:
    body = [f"<h1>{html.escape(title)}</h1>"]
    if alarm:  # a possible bug: red, before anything else
        paragraphs = "".join(f"<p><strong>{html.escape(paragraph)}</strong></p>" for paragraph in alarm)
        body.append(f'<div class="alarm" role="alert" style="color: {_ALARM_RED}">{paragraphs}</div>')
    body += [_html_paragraph(paragraph) for paragraph in text]
    for section in sections:
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        body += [_html_paragraph(paragraph) for paragraph in section.text]
        for stem, caption in section.figures:
            svg = (figure_folder / f"{stem}.svg").read_text(encoding="utf-8")
            svg = svg[svg.index("<svg") :]
            body.append(
                f"<figure>{svg}<figcaption>{html.escape(caption)} "
                f'<a href="figures/{stem}.pdf">PDF</a> <a href="figures/{stem}.png">PNG</a></figcaption></figure>'
            )
        body += [_html_table(table) for table in section.tables]
    return _HTML.format(title=html.escape(title), body="\n".join(body))


def check_out(study: Path, out: str | Path) -> Path:
    """``out`` resolved, if the report of ``study`` may go there: a folder that does not exist,
    is empty or holds a report of ours (MARKER) and nothing else; never the study's folder, a
    folder inside it or one that holds it. Raises RecordError otherwise."""
    if str(out) == "":
        raise RecordError("the report's folder (--out) is empty: name a folder, e.g. --out reports/mine")
    try:
        target, data = Path(out).resolve(), study.resolve()
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop
        raise RecordError(f"{out} cannot be the report's folder: {error}") from None
    if target == data or target.is_relative_to(data) or data.is_relative_to(target):
        raise RecordError(f"{out} is, holds or lies in the study's folder {study}; choose an --out outside it")
    _check_replaceable(target, str(out))
    return target


@contextmanager
def staging(out: Path) -> Iterator[Path]:
    """A new folder beside ``out`` to build the report in, made first (a folder that cannot be
    written fails before the work) and removed afterwards whatever happens, with the parents of
    ``out`` it made if they stay empty."""
    folder = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    made: list[Path] = []
    try:
        try:
            _make_folders(out.parent, made)
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        except OSError as error:
            raise _write_error(out, error) from None
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for parent in reversed(made):
            with suppress(OSError):  # not empty: the report is in it
                parent.rmdir()


def publish_pages(
    staging: Path, out: Path, title: str, text: Sequence[str], sections: Sequence[Section], tables: dict[str, pl.DataFrame]
) -> None:
    """Write a report other than a study's (the skill ladder's) into ``staging``, whose figures/
    its caller has drawn, and move it to ``out``: its CSV tables, Markdown, HTML and marker."""
    try:
        folder = staging / "tables"
        folder.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            table.write_csv(folder / f"{name}.csv", float_precision=10)
        (staging / "report.md").write_text(_markdown(title, text, sections), encoding="utf-8")
        (staging / "index.html").write_text(_page(title, text, sections, staging / "figures"), encoding="utf-8")
        (staging / MARKER).write_text(json.dumps({"study": title, "engine_version": ENGINE_VERSION}) + "\n", encoding="utf-8")
        _replace(staging, out)
    except OSError as error:
        raise _write_error(out, error) from None


def publish(staging: Path, out: Path, report: Report) -> None:
    """Write the report (its tables, figures, Markdown, HTML and marker) into ``staging`` and
    move it to ``out``. An OSError (no space, no permission) becomes a RecordError naming ``out``."""
    try:
        _write_report(staging, report)
        _replace(staging, out)
    except OSError as error:
        raise _write_error(out, error) from None


_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.85rem; }}
th, td {{ padding: 0.2rem 0.6rem; border-bottom: 1px solid #ddd; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
caption {{ text-align: left; font-weight: bold; padding-bottom: 0.3rem; }}
figure {{ margin: 1rem 0; }} figure svg {{ max-width: 100%; height: auto; }}
figcaption {{ font-size: 0.85rem; color: #555; }}
.alarm {{ border: 2px solid #b00000; padding: 0 0.8rem; margin: 1rem 0; }}
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
_REPORT_FILES = (MARKER, "index.html", "report.md")
_REPORT_FOLDERS = {"tables": (".csv",), "figures": tuple(f".{suffix}" for suffix in plot.FORMATS)}
_LITTER = (".DS_Store", "Thumbs.db")  # what file browsers leave in a folder they show


def _markdown_table(table: Table) -> str:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "|".join("---" for _ in table.header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in table.rows]
    return "\n".join(lines)


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in table.header)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in table.rows)
    source = f" (tables/{table.name}.csv)" if table.name else ""
    return f"<table><caption>{html.escape(table.caption + source)}</caption><tr>{head}</tr>{rows}</table>"


def _html_paragraph(text: str) -> str:
    """A paragraph of the report's text in HTML: **bold** and [links](target), the rest escaped."""
    escaped = _LINK.sub(r'<a href="\2">\1</a>', html.escape(text))
    parts = escaped.split("**")
    return "<p>" + "".join(f"<strong>{part}</strong>" if i % 2 else part for i, part in enumerate(parts)) + "</p>"


def _paragraphs(texts: Sequence[str]) -> list[str]:
    return [line for text in texts for line in (text, "")]


def _write_report(folder: Path, report: Report) -> None:
    _write_tables(folder / "tables", report.data)
    draw(folder / "figures", report.data)
    (folder / "report.md").write_text(markdown(report), encoding="utf-8")
    (folder / "index.html").write_text(page(report, folder / "figures"), encoding="utf-8")
    marker = {"study": report.study, "engine_version": ENGINE_VERSION}
    (folder / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")


def _write_tables(folder: Path, data: ReportData) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in data.tables():
        table.write_csv(folder / f"{name}.csv", float_precision=10)


def _make_folders(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and its missing parents, outermost first, adding each to ``made``."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)


def _write_error(out: Path, error: OSError) -> RecordError:
    return RecordError(f"cannot write the report to {out}: {error.strerror or error}")


def _replace(staging: Path, out: Path) -> None:
    """Move the built report to ``out``; the report it replaces is deleted only once the new
    one is in place, and put back if the move fails."""
    _check_replaceable(out, str(out))  # again: the folder may have been filled while we computed
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    try:
        staging.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _check_replaceable(target: Path, name: str) -> None:
    try:
        if not target.is_dir():
            if os.path.lexists(target):
                raise RecordError(f"{name} exists and is not a folder; choose another --out")
            return
        if not any(target.iterdir()):
            return
        if not _is_report(target):
            raise RecordError(f"{name} exists and is not a report of modiar; choose another --out or remove it")
        foreign = _foreign_files(target)
    except OSError as error:
        raise RecordError(f"cannot use {name} as the report's folder: {error.strerror or error}") from None
    if foreign:
        raise RecordError(
            f"{name} holds files the report did not write ({', '.join(foreign[:3])}); move them away or choose another --out"
        )


def _is_report(folder: Path) -> bool:
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        marker = None
    if isinstance(marker, dict) and "study" in marker:
        return True
    # A report of an earlier version of modiar, written before the marker: its own files only.
    return (folder / "index.html").is_file() and (folder / "report.md").is_file() and not _foreign_files(folder)


def _foreign_files(folder: Path) -> list[str]:
    """What in a report's folder the report did not write (a reader's notes, say): replacing
    the folder would lose it."""
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if not _written(path, folder))


def _written(path: Path, folder: Path) -> bool:
    parts = path.relative_to(folder).parts
    if path.name in _LITTER or (len(parts) == 1 and parts[0] in _REPORT_FILES):
        return True
    if len(parts) == 1:
        return parts[0] in _REPORT_FOLDERS and path.is_dir() and not path.is_symlink()
    return len(parts) == 2 and path.suffix in _REPORT_FOLDERS.get(parts[0], ()) and not path.is_dir()
