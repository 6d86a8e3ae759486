"""The study report on disk: its Markdown and HTML (pipeline.report.document), its CSV tables and
figures, and RULES.md beside them, written by pipeline.report.folder's safe protocol."""

from __future__ import annotations

import shutil
from pathlib import Path

from pipeline.report import document
from pipeline.report.folder import replace_folder, write_error, write_marker
from pipeline.runs.paths import rules_md
from pipeline.study.report.data import ReportData
from pipeline.study.report.figures import draw
from pipeline.study.report.sections import Report


def markdown(report: Report) -> str:
    """The report as Markdown, its figures linked from figures/: its alarm first, in bold; then
    its abstract, its contents (links to GitHub's anchors of its headings), its sections, its
    appendix and, after a rule, its footer."""
    return document.markdown(_document(report))


def page(report: Report, figure_folder: Path) -> str:
    """The report as one HTML file with its SVG figures inline (no server, no network): its
    alarm first, in red; then its abstract, its contents, its sections, its appendix and its
    footer. It fits a phone's width: wide tables scroll within their box."""
    return document.page(_document(report), figure_folder)


def publish(staging: Path, out: Path, report: Report) -> None:
    """Write the report (its tables, figures, Markdown, HTML and marker) into ``staging`` and
    move it to ``out``. An OSError (no space, no permission) becomes a RecordError naming ``out``."""
    try:
        _write_report(staging, report)
        replace_folder(staging, out)
    except OSError as error:
        raise write_error(out, error) from None


def _document(report: Report) -> document.Document:
    title = f"Study report: {report.study}"
    return document.Document(title, report.text, report.sections, report.alarm, report.abstract, report.footer)


def _write_report(folder: Path, report: Report) -> None:
    _write_tables(folder / "tables", report.data)
    draw(folder / "figures", report.data)
    shutil.copyfile(rules_md(), folder / "RULES.md")  # the report links its own copy: it holds wherever it goes
    (folder / "report.md").write_text(markdown(report), encoding="utf-8")
    (folder / "index.html").write_text(page(report, folder / "figures"), encoding="utf-8")
    write_marker(folder, report.study)


def _write_tables(folder: Path, data: ReportData) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in data.tables():
        table.write_csv(folder / f"{name}.csv")
