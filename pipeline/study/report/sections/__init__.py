"""The report's words and formatted tables: ``compose`` turns compute's tables into a Report.

A Report is plain text and cells (strings), ready for pipeline.study.report.render to lay out as
Markdown or HTML. Paragraphs may hold **bold** and [links](target); every cell is formatted
here, so the Markdown, the HTML and the tests read the same strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.records import Manifest
from pipeline.render.document import Section
from pipeline.study.report.data import ReportData
from pipeline.study.report.figures import figure_names
from pipeline.study.report.sections.cells import _per_ply, _plural
from pipeline.study.report.sections.exact import _alarm, _exact_section
from pipeline.study.report.sections.games import (
    _event_words,
    _events_by_ply_section,
    _events_section,
    _game_section,
    _length_section,
    _length_words,
)
from pipeline.study.report.sections.methods import _ludii_appendix, _ludii_section, _methods_section
from pipeline.study.report.sections.outcomes import (
    _advantage_section,
    _first_player_section,
    _first_player_words,
    _headline_section,
    _solved_words,
)
from pipeline.study.report.sections.ratings import _agreement_section, _ratings_section
from pipeline.study.report.sections.variants import _variant_sections

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
        _per_ply(table)
    rule_sets = data.outcomes["rules"].unique(maintain_order=True).to_list()
    games = int(data.outcomes["games"].sum())
    versions = manifest.get("versions", {})
    text = [
        f"Study **{manifest['study']}**: {games:,} games under {_plural(len(rule_sets), 'rule set')} "
        f"({', '.join(rule_sets)}), seed {manifest['config'].get('seed')}, engine version {versions.get('engine', '?')}.",
        "South moves first. The first player's score counts a win as 1 and a draw as 1/2; intervals are two-sided "
        "95% (Methods says which, and how the tests are corrected for their number).",
    ]
    sections = [_game_section(data), _headline_section(data)]
    sections += _variant_sections(data) if data.several_rules else []
    sections += [
        _first_player_section(data, exact_pending),
        _length_section(data),
        _events_section(data),
        _events_by_ply_section(data),
    ]
    if data.agreement is not None:
        sections.append(_agreement_section(data.agreement, data))
    if data.ratings is not None and data.first_move is not None and data.ratings_fit is not None:
        sections.append(_ratings_section(data.ratings, data.first_move, data.ratings_fit, data))
    sections.append(_ludii_section(data))
    if data.exact_check is not None:
        sections.append(_exact_section(data.exact_check, data))
    sections += [_methods_section(data), _advantage_section(data), _ludii_appendix(data)]
    drawn = set(figure_names(data))
    for section in sections:
        section.figures = [(stem, caption) for stem, caption in section.figures if stem in drawn]
    alarm = [warning, *_alarm(data)] if warning else _alarm(data)
    return Report(manifest["study"], text, sections, data, alarm, abstract=_abstract(data, exact_pending))


def _abstract(data: ReportData, exact_pending: str | None = None) -> list[str]:
    """The report in plain words, for a reader with five minutes: the solved result, who gains
    from moving first, how long games last and how often the rules fire, under the first rule
    set (a variant sweep's own rule set); each figure is the one the sections give, and says
    whether it is exact or sampled."""
    rules = data.rule_sets["rules"][0]
    pending = f" Every figure below is sampled: {exact_pending}." if exact_pending and data.exact is None else ""
    text = [
        "Modiar is a small mancala from the villages around Tangier: two rows of three pits, seven stones in each. "
        f"This report gives what {int(data.outcomes['games'].sum()):,} games between computer strategies"
        f"{' (and their exact outcomes)' if data.exact is not None else ''} say about the game"
        f"{' and its variants' if data.several_rules else ''}.{pending}"
    ]
    text += _solved_words(data, rules)
    text += _first_player_words(data, rules)
    text += _length_words(data, rules)
    text += _event_words(data, rules)
    return text
