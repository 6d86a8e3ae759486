"""The report's words and formatted tables: ``compose`` turns compute's tables into a Report.

A Report is plain text and cells (strings), ready for pipeline.study.report.render to lay out as
Markdown or HTML. Paragraphs may hold **bold** and [links](target); every cell is formatted
here, so the Markdown, the HTML and the tests read the same strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.game import Rules
from pipeline.report.document import Section
from pipeline.report.prose import plural
from pipeline.runs.records import Manifest
from pipeline.study.report.data import ReportData
from pipeline.study.report.figures import figure_names
from pipeline.study.report.sections.cells import per_ply_words
from pipeline.study.report.sections.exact import exact_alarm, exact_section
from pipeline.study.report.sections.games import (
    event_words,
    events_by_ply_section,
    events_section,
    game_section,
    length_section,
    length_words,
)
from pipeline.study.report.sections.methods import ludii_appendix, ludii_section, methods_section
from pipeline.study.report.sections.outcomes import (
    advantage_section,
    first_player_section,
    first_player_words,
    headline_section,
    solved_words,
)
from pipeline.study.report.sections.quality import quality_section, quality_words
from pipeline.study.report.sections.ratings import agreement_section, exploit_section, ratings_section
from pipeline.study.report.sections.variants import variant_sections

__all__ = ["Report", "compose"]


@dataclass
class Report:
    """The report: ``alarm`` (what a reader must know before anything else: that the study is
    unfinished, that sampled figures lie far from their exact values) opens it, in red in HTML;
    then the abstract, ``text``, the sections (the appendix's last) and the footer."""

    study: str
    text: list[str]
    sections: list[Section]
    data: ReportData
    alarm: list[str] = field(default_factory=list)
    abstract: list[str] = field(default_factory=list)  # plain words, before everything but the alarm
    footer: list[str] = field(default_factory=list)  # how the report was made: commit, version, date, command


def compose(manifest: Manifest, data: ReportData, *, warning: str | None = None, exact_pending: str | None = None) -> Report:
    """The report's words and formatted tables, from the computed tables; ``warning`` (that the
    study is unfinished, pipeline.study.status.incomplete_warning) opens the report, in bold, before the
    alarm of any sampled figure more than 4 standard errors from its exact value.
    ``exact_pending`` (pipeline.study.status.exact_pending: the study asks for exact outcomes that its
    run has not written) is said where the exact values would be: the abstract and the captions
    of the figures that would show them. Raises ValueError for the tables of
    compute(..., per_ply=False), which lack the per-ply ones."""
    for table in (data.ludii_plies, data.ludii_comparable, data.events_by_ply):
        per_ply_words(table)
    rule_sets = data.outcomes["rules"].unique(maintain_order=True).to_list()
    games = int(data.outcomes["games"].sum())
    versions = manifest.get("versions", {})
    text = [
        f"Study **{manifest['study']}**: {games:,} games under {plural(len(rule_sets), 'rule set')} "
        f"({', '.join(rule_sets)}), seed {manifest['config'].get('seed')}, engine version {versions.get('engine', '?')}.",
        "South moves first. The first player's score counts a win as 1 and a draw as 1/2; intervals are two-sided "
        "95% (Methods says which, and how the tests are corrected for their number).",
    ]
    sections = [game_section(data), headline_section(data)]
    sections += variant_sections(data) if data.several_rules else []
    sections += [
        first_player_section(data, exact_pending),
        length_section(data),
        events_section(data),
        events_by_ply_section(data),
    ]
    if data.agreement is not None:
        sections.append(agreement_section(data.agreement, data))
    if data.ratings is not None and data.first_move is not None and data.ratings_fit is not None:
        sections.append(ratings_section(data.ratings, data.first_move, data.ratings_fit, data))
    if data.exploitability is not None:
        sections.append(exploit_section(data.exploitability, data))
    if data.quality is not None:
        sections.append(quality_section(data.quality, data))
    sections.append(ludii_section(data))
    if data.exact_check is not None:
        sections.append(exact_section(data.exact_check, data))
    sections += [methods_section(data), advantage_section(data), ludii_appendix(data)]
    drawn = set(figure_names(data))
    for section in sections:
        section.figures = [(stem, caption) for stem, caption in section.figures if stem in drawn]
    alarm = [warning, *exact_alarm(data)] if warning else exact_alarm(data)
    return Report(manifest["study"], text, sections, data, alarm, abstract=_abstract(data, exact_pending))


def _abstract(data: ReportData, exact_pending: str | None = None) -> list[str]:
    """The report in plain words, for a reader with five minutes: the solved result, who gains
    from moving first, how long games last and how often the rules fire, under the first rule
    set (a variant sweep's own rule set); each figure is the one the sections give, and says
    whether it is exact or sampled."""
    rules = data.rule_sets["rules"][0]
    pending = f" Every figure below is sampled: {exact_pending}." if exact_pending and data.exact is None else ""
    text = [
        "Modiar is a small mancala from the villages around Tangier: two rows of three pits, "
        f"{_stones(rules)} in each{' under the rules of this study' if _stones(rules) != 'seven stones' else ''}. "
        f"This report gives what {int(data.outcomes['games'].sum()):,} games between computer strategies"
        f"{' (and their exact outcomes)' if data.exact is not None else ''} say about the game"
        f"{' and its variants' if data.several_rules else ''}.{pending}"
    ]
    text += solved_words(data, rules)
    text += first_player_words(data, rules)
    text += length_words(data, rules)
    text += event_words(data, rules)
    text += quality_words(data)
    return text


def _stones(rules: str) -> str:
    """The stones a pit starts with under ``rules``, in words ("seven stones")."""
    count = Rules.from_name(rules).stones_per_pit
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return f"{words[count] if count < len(words) else count} stone{'' if count == 1 else 's'}"
