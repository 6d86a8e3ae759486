"""A study's report: ``modiar study report DIR`` (the end of ``make study``).

    reports/<study>/index.html      the whole report, one file, figures inline: opens offline
    reports/<study>/report.md       the same text and tables, figures linked
    reports/<study>/tables/*.csv    every table at full precision (what the report rounds)
    reports/<study>/figures/*.svg|pdf|png   every figure, in the style of pipeline.report.figures
    reports/<study>/RULES.md        the rules the report cites, a copy: its links hold wherever it goes

Every number comes from the study's Parquet through the library: pipeline.analysis.metrics (outcomes,
Ludii game metrics, rule events), pipeline.analysis.turns (the per-ply metrics, events by ply and
agreement with perfect play, by replaying the recorded moves) and pipeline.analysis.ratings. A study of
one rule set gets the full report of its pairings; a study of several rule sets (a variant
sweep) gets, first, what each rule set does to the first-player advantage, game length and
the rule events, then the same per-pairing tables with a ``rules`` column. A study with exact
outcomes (exact.parquet) gets them beside the sampled figures and in its headlines, and every
sampled figure tested against its exact value (pipeline.exact.check): a figure more than 4
standard errors away opens the report, in red, as a possible bug.

One module per job, in the order build_report runs them:

    tables     the tables: compute(games, manifest, exact=...) -> ReportData, one field per table
    sections   the words and formatted tables: compose(manifest, data) -> Report
    figures    which figures, from which table: figure_names(data), figure(name, data)
    render     Markdown, HTML and CSV, and the output folder's safety (check_out, MARKER)
"""

from __future__ import annotations

import datetime
import functools
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from engine.store import ENGINE_VERSION
from pipeline.report.document import Section, Table
from pipeline.report.folder import MARKER, check_out, staging
from pipeline.runs.costs import COSTS
from pipeline.runs.paths import REPORTS, ROOT
from pipeline.runs.progress import StepsBar
from pipeline.runs.records import PAIRING_COLUMNS, RecordError, read_study_manifest, scan_exact, scan_games
from pipeline.study.report.data import ReportData, compute, variant_labels
from pipeline.study.report.exploits import exploitabilities, pending_seconds
from pipeline.study.report.figures import figure, figure_names
from pipeline.study.report.quality import calibration, qualities
from pipeline.study.report.quality import pending_seconds as quality_pending
from pipeline.study.report.render import markdown, page, publish
from pipeline.study.report.sections import Report, compose
from pipeline.study.status import exact_pending, incomplete_warning

__all__ = [
    "MARKER",
    "PAIRING_COLUMNS",
    "Report",
    "ReportData",
    "Section",
    "Table",
    "build_report",
    "check_out",
    "compose",
    "compute",
    "figure",
    "figure_names",
    "markdown",
    "page",
    "variant_labels",
]


def build_report(directory: str | Path, out: str | Path | None = None, *, progress: bool = True) -> Path:
    """Compute, draw and write the report of the study in ``directory``; returns its folder
    (default reports/<study>/). Raises RecordError for a folder that is not a sound study, and
    for an ``out`` that is not a new or empty folder or a report of ours (see check_out), or
    cannot be written; then the report that was there, if any, is left as it was."""
    directory = Path(directory)
    manifest = read_study_manifest(directory)
    games = scan_games(directory)
    rebuilt_with = footer(directory, None if out is None else Path(out))
    out = check_out(directory, out if out is not None else _default_out(manifest["study"]))
    started = time.perf_counter()
    played = sum(entry["rows"] for entry in manifest["chunks"].values())
    steps = report_steps(played, pending_seconds(manifest), quality_pending(manifest))
    bar = StepsBar(f"report of {manifest['study']}", steps, progress=progress)
    try:
        with staging(out) as folder:
            bar.step(COMPUTING)
            data = compute(games, manifest, exact=scan_exact(directory) if "exact" in manifest else None)
            bar.step(EXPLOITING)
            data = replace(data, exploitability=exploitabilities(manifest))
            bar.step(JUDGING)
            found = qualities(manifest)
            if found is not None:
                data = replace(data, quality=found[0], quality_curves=found[1])
            measured = calibration(games, manifest)
            if measured is not None:
                data = replace(data, calibration=measured[0], calibration_agreement=measured[1])
            bar.step(COMPOSING)
            report = compose(
                manifest,
                data,
                warning=incomplete_warning(directory, manifest, verified=True),
                exact_pending=exact_pending(directory, manifest),
            )
            report.footer = rebuilt_with
            bar.step(PUBLISHING)
            publish(folder, out, report)
    finally:
        bar.close()
    _say(progress, f"report of {manifest['study']} in {time.perf_counter() - started:.1f} s: {out / 'index.html'}")
    return out


COMPUTING, COMPOSING, PUBLISHING = "computing the tables", "composing the sections", "drawing the figures and writing the pages"
EXPLOITING = "the table strategies' exploitability (cached after the first report)"
JUDGING = "the exact quality of their self-play (cached after the first report) and Ludii's metrics against it"


def report_steps(games: int, exploiting: float = 0.0, judging: float = 0.0) -> list[tuple[str, float]]:
    """The steps of the report of a study of ``games`` games, each with its estimate in seconds
    (pipeline/costs.toml: the tables replay every game's plies, the rest does not grow with them;
    ``exploiting`` and ``judging``: the exploitabilities' and the self-play qualities' seconds,
    0 when they are cached or not wanted)."""
    return [
        (COMPUTING, COSTS.report_tables_seconds + COSTS.report_tables_seconds_per_game * games),
        (EXPLOITING, exploiting),
        (JUDGING, judging),
        (COMPOSING, COSTS.report_sections_seconds),
        (PUBLISHING, COSTS.report_figures_seconds),
    ]


def footer(directory: Path, out: Path | None = None) -> list[str]:
    """How a report was made: the code's commit, the engine's version, the date and the command
    that rebuilds it (``out``: the report's folder when not the default one)."""
    command = f"modiar study report {directory}" + ("" if out is None else " --out <the folder of this report>")
    return [
        f"Built on {datetime.date.today().isoformat()} by modiar at commit {source_commit()}, engine version "
        f"{ENGINE_VERSION}, from the study in {directory}. Rebuild it with: {command}"
    ]


def source_commit() -> str:
    """The git commit of the code that runs (with "+ changes" when the checkout has uncommitted
    changes), or "unknown (not a git checkout)" for an installed copy."""
    if not (ROOT / ".git").exists():  # an installed copy, perhaps inside some other repository
        return "unknown (not a git checkout)"
    try:
        run = functools.partial(subprocess.run, cwd=ROOT, capture_output=True, text=True, timeout=10, check=True)
        commit = run(["git", "rev-parse", "--short=12", "HEAD"]).stdout.strip()
        dirty = run(["git", "status", "--porcelain", "--untracked-files=no"]).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return f"{commit} + changes" if dirty else commit


def _default_out(study: object) -> Path:
    """reports/<study>/, which must be a folder right inside reports/ (the manifest is user data)."""
    out = REPORTS / str(study)
    if not isinstance(study, str) or out.resolve().parent != REPORTS.resolve():
        raise RecordError(f"the study's name {study!r} cannot name a folder in {REPORTS}; choose the report's folder with --out")
    return out


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr)
