"""The report's words and formatted tables: ``compose`` turns compute's tables into a Report.

A Report is plain text and cells (strings), ready for pipeline.report.render to lay out as
Markdown or HTML. Paragraphs may hold **bold** and [links](target); every cell is formatted
here, so the Markdown, the HTML and the tests read the same strings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

import engine
from engine.rules import Rules
from pipeline.exact_check import FLAG_P, FLAG_Z, MIN_EXPECTED, MIN_GAMES, label
from pipeline.ratings import fits_poorly
from pipeline.records import Manifest
from pipeline.report.figures import figure_names, ladder_axis
from pipeline.report.tables import GAME_EVENTS, KEYS, SELF_PLAY, ReportData
from pipeline.report.words import GAME, describe, event, short
from pipeline.stats import p_text
from pipeline.turns import MAX_GAMES_PER_PAIRING

# The rules the report's words refer to: the repository's RULES.md, seen from reports/<study>/.
RULES_MD = "[RULES.md](RULES.md)"  # the copy every report carries (pipeline.report.render)
# An exact value has no sampling error: it is printed with more digits than its sampled estimate.
EXACT_SCORE_DIGITS = 9  # the headline's first-player score


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
    study is unfinished, pipeline.status.incomplete_warning) opens the report, in bold, before the
    alarm of any sampled figure more than 4 standard errors from its exact value.
    ``exact_pending`` (pipeline.status.exact_pending: the study asks for exact outcomes that its
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


def _headline_section(data: ReportData) -> Section:
    """The figures a reader wants first, per rule set: those of its pairing with the most games,
    formatted exactly as in the tables below; its exact values instead where the study has them."""
    text = []
    main = data.main_pairings()
    for keys in main.iter_rows(named=True):
        variant = _row(data.rule_sets, {"rules": keys["rules"]})["variant"]
        name = f"{variant} ({keys['rules']})" if data.several_rules and variant != keys["rules"] else keys["rules"]
        outcome = _row(data.outcomes, keys)
        opening = f"**{name}, {keys['south']} (South) v {keys['north']} (North), {outcome['games']:,} games.** "
        exact = _exact_row(data, keys)
        text.append(opening + (_sampled_headline(data, keys) if exact is None else _exact_headline(outcome, exact)))
    if data.agreement is not None:
        values = _start_values(data.agreement)
        if len(values) == 1:
            text.append(f"**Perfect play.** {_start_words(*values[0])}.")
        else:
            words = "; ".join(f"{rules}: {_start_words(rules, value)}" for rules, value in values)
            text.append(f"**Perfect play.** {words}.")
    return Section("Headlines", text)


def _sampled_headline(data: ReportData, keys: dict[str, Any]) -> str:
    outcome = _row(data.outcomes, keys)
    length = _row(data.ludii, keys)
    fired = data.events.filter(*(pl.col(key) == value for key, value in keys.items()))
    rates = "; ".join(
        f"{short(row['event'])} {_share(row, 'fired', 2)}" for row in fired.iter_rows(named=True) if row["event"] in GAME_EVENTS
    )
    return (
        f"First-player score {_plain(outcome, 'first_player', 3)} "
        f"(two-sided sign test against 1/2: p {_p_text(outcome['first_player_p'])}); "
        f"South wins {_share(outcome, 'south')}%, draws {_share(outcome, 'draw')}%. "
        f"Mean length {length['Duration']:.2f} [{length['Duration_low']:.2f}, {length['Duration_high']:.2f}] plies. "
        f"Games in which each rule fires (%): {rates}."
    )


def _exact_headline(outcome: dict[str, Any], exact: dict[str, Any]) -> str:
    rates = "; ".join(f"{short(name)} {100 * exact[f'fires_{name}']:.4f}" for name in GAME_EVENTS)
    return (
        f"First-player score {exact['first_player_score']:.{EXACT_SCORE_DIGITS}f} (exact; its games give "
        f"{_plain(outcome, 'first_player', 3)}); South wins {100 * exact['south_win']:.4f}%, draws "
        f"{100 * exact['draw']:.4f}% (exact). Mean length {exact['mean_plies']:.4f} plies (exact). "
        f"Games in which each rule fires (%, exact): {rates}."
    )


def _variant_sections(data: ReportData) -> list[Section]:
    rule_sets = [
        [row["variant"], row["rules"], f"{row['games']:,}", "n/a" if row["start_value"] is None else f"{row['start_value']:+d}"]
        for row in data.rule_sets.iter_rows(named=True)
    ]
    self_play = data.with_variant(data.outcomes.filter(SELF_PLAY)).join(
        data.ludii.select(*KEYS, "Duration", "Duration_low", "Duration_high"), on=list(KEYS), maintain_order="left"
    )
    rows = [
        [
            row["variant"],
            row["south"],
            f"{row['games']:,}",
            *_beside(
                [
                    _plain(row, "first_player", 3),
                    _share(row, "draw"),
                    f"{row['Duration']:.2f} [{row['Duration_low']:.2f}, {row['Duration_high']:.2f}]",
                ],
                [
                    _exact_cell(data, row, "first_player_score", "{:.6f}"),
                    _exact_cell(data, row, "draw", "{:.3f}", 100),
                    _exact_cell(data, row, "mean_plies", "{:.4f}"),
                ],
                data,
            ),
        ]
        for row in self_play.iter_rows(named=True)
    ]
    fired = data.with_variant(data.main_pairings().join(data.events, on=list(KEYS), maintain_order="left"))
    event_rows = [
        [
            row["variant"],
            f"{row['south']} v {row['north']}",
            short(row["event"]),
            *_beside([_share(row, "fired", 2)], [_exact_cell(data, row, f"fires_{row['event']}", "{:.4f}", 100)], data),
        ]
        for row in fired.iter_rows(named=True)
        if row["event"] in GAME_EVENTS
    ]
    self_play_header = ["first-player score", "draws (%)", "mean plies"]
    self_play_exact = ["first-player score, exact", "draws, exact (%)", "mean plies, exact"]
    return [
        Section(
            "What each rule does",
            [
                "Each rule set is the study's [rules] (labelled default) with the changes its label names; the rule-set "
                f"name spells out every field that differs from {RULES_MD}. The value of the start for South under perfect "
                "play is given for the rule sets under which the study played perfect. Self-play pairings: the "
                f"first-player score, the share of draws and the mean length of a game.{_exact_note(data)}"
            ],
            [
                Table("Rule sets", ["variant", "rules", "games", "value of the start (perfect play)"], rule_sets, "rule_sets"),
                Table(
                    "Self-play per rule set",
                    ["variant", "strategy", "games", *_beside(self_play_header, self_play_exact, data)],
                    rows,
                ),
            ],
            [
                ("variant_first_player_advantage", "First-player score per rule set and strategy (self-play), 95% intervals."),
                ("variant_game_length", "Mean game length per rule set and strategy (self-play), 95% intervals."),
            ],
        ),
        Section(
            "How often the rules fire, per rule set",
            [
                "In the pairing with the most games of each rule set; tables/events.csv has every pairing and counter."
                + _exact_note(data)
                + _ruled_out(data)
            ],
            [
                Table(
                    "Games where each rule fires",
                    [
                        "variant",
                        "pairing",
                        "event",
                        *_beside(["games where it fires (%)"], ["games where it fires, exact (%)"], data),
                    ],
                    event_rows,
                )
            ],
            [
                (
                    "variant_rule_events",
                    "Share of games (%) in which each rule fires, per rule set (its largest pairing); a blank cell is an "
                    "event the rule set rules out.",
                )
            ],
        ),
    ]


def _advantage_section(data: ReportData) -> Section:
    # North's wins are the rest of each pairing's games: left out here, so that the table keeps
    # its exact columns within a laptop's width (tables/outcomes.csv has them)
    rows = [
        [*_pairing_cells(row, data), *_beside(_without_north(_outcome_cells(row)), _exact_outcome_cells(data, row), data)]
        for row in data.outcomes.iter_rows(named=True)
    ]
    pooled = [[row["rules"], *_outcome_cells(row)[:-1]] for row in data.outcomes_overall.iter_rows(named=True)]
    cells = ["games", "South wins (%)", "draws (%)", "North wins (%)", "first-player score", "p (score = 1/2)", "p (Holm)"]
    exact = [None, "South wins, exact (%)", "draws, exact (%)", "first-player score, exact", None, None]
    text = (
        "The first player's score per ordered pairing (South's strategy first), with the exact sign test against one "
        "half and its Holm adjustment over every pairing; North wins the rest of the games (tables/outcomes.csv gives "
        "that share too, with its interval). Then every game of a rule set pooled (each pairing weighs as many games "
        "as it played). Between different strategies the score mixes the seat with their strengths: the seat effect "
        "is read from both orders together (Who gains from moving first)."
    )
    text += _exact_note(data)
    return Section(
        "Outcomes of every pairing",
        [text],
        [
            Table(
                "Outcomes per pairing", [*_pairing_header(data), *_beside(_without_north(cells), exact, data)], rows, "outcomes"
            ),
            Table("All pairings pooled", ["rules", *cells[:-1]], pooled, "outcomes_overall"),
        ],
        [("first_player_advantage", "First-player score per pairing, 95% intervals; the dashed line is a fair game.")],
        appendix=True,
    )


def _without_north(cells: list[str]) -> list[str]:
    """_outcome_cells (or their headers) without North's wins, the fourth."""
    return cells[:3] + cells[4:]


def _outcome_cells(row: dict[str, Any]) -> list[str]:
    return [
        f"{row['games']:,}",
        _share(row, "south"),
        _share(row, "draw"),
        _share(row, "north"),
        _plain(row, "first_player", 3),
        _p_value(row["first_player_p"]),
        _p_value(row.get("first_player_p_holm")),
    ]


def _length_section(data: ReportData) -> Section:
    capped = bool(data.ludii["Timeouts"].max())
    rows = [
        [
            *_pairing_cells(row, data),
            *_beside(
                [f"{row['Duration']:.2f} [{row['Duration_low']:.2f}, {row['Duration_high']:.2f}]"],
                [_exact_cell(data, row, "mean_plies", "{:.4f}")],
                data,
            ),
            f"{row['Duration_median']:.1f}",
            f"{row['Duration_p90']:.1f}",
            f"{row['Duration_p99']:.1f}",
            f"{row['Duration_max']}",
            *([f"{100 * row['Timeouts']:.2f}"] if capped else []),
        ]
        for row in data.ludii.iter_rows(named=True)
    ]
    header = [*_pairing_header(data), *_beside(["mean plies"], ["mean plies, exact"], data)]
    header += ["median", "90th percentile", "99th percentile", "longest", *(["at the ply cap (%)"] if capped else [])]
    subjects = "the largest pairing of each rule set" if data.several_rules else "the self-play pairings"
    cap = "" if capped else " No game of the study reached the ply cap."
    return Section(
        "Game length",
        ["Plies per game (a ply is one player's move)." + cap + _exact_note(data)],
        [Table("Game length per pairing", header, rows, "ludii")],
        [("game_length", f"Distribution of game length in {subjects}; each panel's axis stops at 99.5% of its games.")],
    )


def _ludii_section(data: ReportData) -> Section:
    """The Ludii-comparable table: self-play, counted as Ludii counts (pipeline.ludii)."""
    table = _per_ply(data.ludii_comparable)
    names = ["AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts", "Duration", "Duration_p99"]
    names += ["BranchingFactor", "BranchingFactor_per_turn", "DecisionMoves", "PositionalRepetition", "PositionalRepetition_ours"]
    timeouts = bool(table.height) and bool(table["Timeouts"].max())
    names = [name for name in names if name in table.columns and (name != "Timeouts" or timeouts)]
    rows = [
        [*_rules_cells(row, data), row["south"], *(_ludii_cell(name, row[name]) for name in names)]
        for row in table.iter_rows(named=True)
    ]
    return Section(
        "Ludii game metrics",
        [
            "The metrics of the Ludii general game system (Digital Ludeme Project) under their own names, computed as "
            "Ludii computes them, so that Modiar can be set beside the games of its database: self-play only; a game "
            "stopped by the ply cap counted as a draw, as Ludii counts a game that reaches its move limit; "
            "BranchingFactor, the legal moves per turn averaged in each game and then over games, as Ludii does (beside "
            "it the same pooled over every turn); PositionalRepetition as Ludii's code computes it, the share of games "
            "in which a board comes back (beside it ours, the share of a game's positions, board and player to move, "
            "seen before). Player 1 is South. Shares are fractions, Duration and its 99th "
            "percentile are plies. pipeline.ludii gives the definitions and the Ludii source files they follow; the "
            "appendix has our own metrics for every pairing."
            + ("" if timeouts else " Timeouts is left out: no self-play game reached the ply cap.")
        ],
        [Table("Ludii-comparable metrics (self-play)", [*_rules_header(data), "strategy", *names], rows, "ludii_comparable")],
    )


def _ludii_appendix(data: ReportData) -> Section:
    table = data.ludii.join(_per_ply(data.ludii_plies).drop("games", strict=False), on=list(KEYS), how="left")
    names = ["AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts", "Duration"]
    names += ["BranchingFactor", "DecisionMoves", "PositionalRepetition"]
    names = [name for name in names if name != "Timeouts" or bool(table["Timeouts"].max())]
    rows = [
        [*_pairing_cells(row, data), *(_ludii_cell(name, row[name]) for name in names)] for row in table.iter_rows(named=True)
    ]
    return Section(
        "Game metrics of every pairing",
        [
            "The Ludii metrics as this project defines them, for every ordered pairing: a game stopped by the ply cap "
            "keeps the winner of its score, BranchingFactor is the mean per game without the games of no move, "
            "PositionalRepetition ours "
            f"(pipeline.turns).{'' if bool(table['Timeouts'].max()) else ' Timeouts is left out: no game reached the ply cap.'}"
        ],
        [Table("Ludii metrics per pairing", [*_pairing_header(data), *names], rows, "ludii")],
        appendix=True,
    )


def _events_section(data: ReportData) -> Section:
    main = data.main_pairings()
    table = data.events.join(main, on=list(KEYS), how="semi")
    rows = [
        [
            *_rules_cells(row, data),
            short(row["event"]),
            f"{row['fired']:,}",
            f"{row['total']:,}",
            *_beside(
                [_share(row, "fired", 2), f"{row['mean']:.4f} [{row['mean_low']:.4f}, {row['mean_high']:.4f}]"],
                [
                    _exact_cell(data, row, f"fires_{row['event']}", "{:.4f}", 100),
                    _exact_cell(data, row, f"mean_{row['event']}", "{:.6f}"),
                ],
                data,
            ),
            _rate(row),
        ]
        for row in table.iter_rows(named=True)
    ]
    sampled = ["games where it fires (%)", "mean per game"]
    header = [
        *_rules_header(data),
        "event",
        "games where it fired",
        "count",
        *_beside(sampled, ["fires, exact (%)", "mean, exact"], data),
        "per 100 turns",
    ]
    return Section(
        "Rule events",
        [
            f"How often each rule of {RULES_MD} fires, in the pairing with the most games ({_described(main)}); "
            "the glossary (The game and the players) says what each event means, and tables/events.csv has every "
            "pairing. The raw counts come first: the games in which the event fired and its count over all games. "
            "Counts of stones and pits are stones and pits; the others are turns or games. The intervals of a mean "
            f"and of a rate are score intervals that keep their coverage for a rare event (Methods).{_exact_note(data)}"
            f"{_ruled_out(data)}"
        ],
        [Table("Rule events", header, rows, "events")],
        [("rule_events", "Share of games in which each rule fires, self-play pairings, 95% Wilson intervals.")],
    )


def _ruled_out(data: ReportData) -> str:
    """The sentence naming, per rule set of the study, the events its rules rule out (no row in
    any table: engine.possible_events), if any."""
    parts = []
    for rules in data.rule_sets["rules"].to_list():
        absent = [short(name) for name in engine.EVENTS if name not in engine.possible_events(Rules.from_name(rules))]
        if absent:
            parts.append(f"{_listed(absent)} under {rules}" if data.several_rules else _listed(absent))
    if not parts:
        return ""
    return (
        f" A rule set without the rule behind an event has no row for it, rather than a count of 0 (RULES.md: Rule "
        f"events): {'; '.join(parts)}."
    )


def _events_by_ply_section(data: ReportData) -> Section:
    return Section(
        "Events by ply",
        [
            f"When in the game each rule fires, in {_described(data.main_pairings())}: the share of the turns played at "
            "each ply on which a turn event fires, and the share of games reaching a ply that end there with each end "
            "event. tables/events_by_ply.csv has every pairing and ply."
        ],
        [],
        [
            ("events_by_ply", "Turn events by ply (first_move_forfeit fires at ply 0 only), 95% Wilson bands, log scale."),
            (
                "end_events_by_ply",
                "End events: of the games reaching a ply, the share that end there, 95% Wilson bands, log scale.",
            ),
        ],
    )


def _ratings_section(ladder: pl.DataFrame, first_move: pl.DataFrame, fit: pl.DataFrame, data: ReportData) -> Section:
    rows = [
        [
            *_rules_cells(row, data),
            row["strategy"],
            f"{row['rating']:.0f} [{row['low']:.0f}, {row['high']:.0f}]" if row["bounded"] else "not bounded by the games",
            f"{row['games']:,}",
            "n/a" if row["score"] is None else f"{row['score']:.3f}",
        ]
        for row in ladder.iter_rows(named=True)
    ]
    first = [
        [
            *_rules_cells(row, data),
            row["strategy"],
            "n/a" if row["elo"] is None else f"{row['elo']:.0f} [{row['low']:.0f}, {row['high']:.0f}]",
            "n/a"
            if row["elo"] is None
            else f"{row['expected_score']:.3f} [{row['expected_score_low']:.3f}, {row['expected_score_high']:.3f}]",
        ]
        for row in first_move.iter_rows(named=True)
    ]
    fits = [
        [
            *_rules_cells(row, data),
            "one first-move term" if row["model"] == "shared" else "a first-move term per strategy",
            f"{row['pairings']}",
            f"{row['parameters']}",
            f"{row['deviance']:,.1f}",
            f"{row['df']}",
            "n/a" if row["dispersion"] != row["dispersion"] else f"{row['dispersion']:,.1f}",
            _p_value(row["p"]),
        ]
        for row in fit.iter_rows(named=True)
    ]
    per_strategy = fit.filter(pl.col("model") == "per_strategy").row(0, named=True)
    misfit = fits_poorly(per_strategy["dispersion"])
    rules = _rules_header(data)
    _, cut, unbounded = ladder_axis(ladder)
    text = [
        "A Bradley-Terry model fitted to every game of the round robin, a draw counting half a win for each side, on "
        "the Elo scale (400 points is a factor of 10 in the odds), with a first-move term for each strategy in South's "
        f"seat (Agresti, Categorical Data Analysis, section 11.6). {_anchor_text(fit)} A weak Gaussian prior "
        f"(sd {first_move['prior_sd'][0]:.0f} Elo) keeps the terms of a strategy that never loses, or never wins, finite; "
        "such a term is set by the prior and says only that the games cannot bound it.",
        "**How well the model fits.** The deviance and Pearson's dispersion (chi-square over its degrees of freedom) "
        "are given for the model with one shared first-move term and for the model with one per strategy "
        "(tables/ratings_fit.csv). Every interval is widened by the square root of the dispersion when it is above 1 "
        "(quasi-likelihood; McCullagh and Nelder, Generalized Linear Models, section 4.5).",
    ]
    if unbounded:
        text.append(
            f"**Not bounded by the games: {_listed(unbounded)}.** The strategies split into groups one of which never "
            "scored a point (no win, no draw) against another, so the maximum-likelihood ratings between them are "
            "infinite (Ford 1957, American Mathematical Monthly 64:28): such a rating is the prior's number, not the "
            "games'. The table says so, the figure draws an arrow for it, and tables/ratings.csv keeps the number with "
            "its column bounded false."
        )
    if misfit:
        text.append(
            f"**The model does not fit these games** (dispersion {per_strategy['dispersion']:,.0f} with a first-move term "
            "per strategy): the strategies' results are not those of one strength each. Deterministic players beat some "
            "opponents from one seat and lose from the other, and strength is not transitive. The ratings are a rough "
            "summary with intervals widened to match; the outcome of every pairing (appendix) and the seat effects are "
            "the results, and no first-move term is headlined."
        )
    return Section(
        "Strategy ratings",
        text,
        [
            Table("Rating ladder (Elo)", [*rules, "strategy", "rating", "games", "score"], rows, "ratings"),
            Table(
                "First-move term per strategy in South's seat",
                [*rules, "strategy", "Elo", "expected score between equals"],
                first,
                "first_move",
            ),
            Table(
                "Fit of the rating models",
                [*rules, "model", "pairings", "parameters", "deviance", "df", "dispersion", "p (fit)"],
                fits,
                "ratings_fit",
            ),
        ],
        [("rating_ladder", _ladder_caption(cut, unbounded))],
    )


def _ladder_caption(cut: list[str], unbounded: list[str]) -> str:
    """The rating figure's caption, saying what its axis leaves out (figures.ladder_axis)."""
    caption = "Ratings with 95% intervals (widened by the model's dispersion); the anchor strategy is at 0."
    if cut:
        one = len(cut) == 1
        noun, runs, be, whose = ("interval", "runs", "is", "its") if one else ("intervals", "run", "are", "their")
        caption += f" The {noun} of {_listed(cut)} {runs} past the axis and {be} cut at its edge (arrowheads); "
        caption += f"the table gives {whose} ends."
    if unbounded:
        caption += f" The games do not bound the rating of {_listed(unbounded)}: an arrow at the edge, no point."
    return caption


def _agreement_section(agreement: pl.DataFrame, data: ReportData) -> Section:
    rows = [
        [
            *_rules_cells(row, data),
            row["strategy"],
            f"{row['moves']:,}",
            _share(row, "kept", 2),
            f"{row['loss']:.3f} [{row['loss_low']:.3f}, {row['loss_high']:.3f}]",
        ]
        for row in agreement.iter_rows(named=True)
    ]
    values = ", ".join(f"{rules}: {value:+d}" for rules, value in _start_values(agreement))
    rules = _rules_header(data)
    section = Section(
        "Perfect play",
        [
            f"The value of the start under perfect play (South's final total minus North's): {values}; the value of each "
            "of South's first moves is that of the game after it, both sides then playing perfectly. Each strategy's "
            "moves against the strong solution: the share that keep the value and the value lost per move "
            f"(in stones of final margin), over the first {MAX_GAMES_PER_PAIRING:,} games (by game id) of every pairing. "
            "Moves within a game are not independent, so the intervals of the loss are somewhat narrow."
        ],
        [
            Table(
                "Agreement with perfect play",
                [*rules, "strategy", "moves", "moves that keep the value (%)", "value lost per move"],
                rows,
                "agreement",
            )
        ],
        [("perfect_play_agreement", "Share of moves that keep the game's value, 95% Wilson intervals.")],
    )
    if data.openings is not None:
        openings = [
            [*_rules_cells(row, data), f"{row['pit']}", f"{row['value']:+d}", "yes" if row["best"] else "no"]
            for row in data.openings.iter_rows(named=True)
        ]
        header = [*rules, "pit", "value for South (stones)", "best"]
        section.tables.insert(0, Table("South's first moves under perfect play", header, openings, "openings"))
    return section


def _exact_section(check: pl.DataFrame, data: ReportData) -> Section:
    """The test of every sampled figure against its exact value (pipeline.exact_check)."""
    pairings = check.select(*KEYS).unique(maintain_order=True).height
    flagged = check.filter("flagged")
    approximate = check.filter("approximate")
    largest = (
        check.with_columns(pl.col("z").abs().alias("_size")).sort("_size", descending=True, nulls_last=True).row(0, named=True)
    )
    text = [
        "Where the study has the exact outcome of a pairing (engine.exact_outcome: the outcome distribution of two "
        "table strategies, with no sampling error), every figure its games estimate is tested against its exact value: "
        "the shares of South wins, draws and North wins, the first-player score, the mean length and, for every rule "
        "event, the share of games in which it fires and its mean count per game. The test is a one-sample z test, "
        "z = (sampled - exact) / standard error, the standard error being that of the pairing's games under the exact "
        "distribution (for an event's mean count, whose exact variance is not stored, the sample's, but never below the "
        f"least a count with the exact mean can have). A figure with |z| above {FLAG_Z:g} (a chance of {FLAG_P:.1e} for one "
        "honest figure) is flagged as a possible bug at the top of the report. pipeline.exact_check gives the details; "
        "tables/exact_check.csv has every test and tables/exact.csv every exact outcome, at full precision.",
        f"**{len(check):,} figures of {_plural(pairings, 'pairing')} tested: {_flag_count(len(flagged))}.** "
        f"The z farthest from 0 is {_z(largest['z'])}: {_figure(largest, data)}"
        f"{' (approximate, see below)' if largest['approximate'] else ''}.",
    ]
    if len(approximate):
        text.append(
            f"The z of {len(approximate):,} of these figures is approximate: the pairing has fewer than {MIN_GAMES} games, "
            f"or fewer than {MIN_EXPECTED} of its games are expected away from the figure's most likely value (a rare event, "
            "a share near 0 or 1), where the normal law misleads (one game in which a rare event fires can lie many "
            "standard errors out). Such a share is flagged by its exact binomial test at the same level instead, and any "
            "other such figure only when its exact outcome rules it out."
        )
    unflagged = approximate.filter(~pl.col("flagged") & (pl.col("z").abs() > FLAG_Z))
    if len(unflagged):
        text.append(
            f"Approximate figures with |z| above {FLAG_Z:g} but not flagged (their exact test, or the share behind them, "
            f"passes): {'; '.join(_finding(row, data) for row in unflagged.iter_rows(named=True))}."
        )
    tables = [
        Table(
            "Sampled against exact per pairing",
            [*_pairing_header(data), "games", "figures", "z farthest from 0", "flagged"],
            _check_rows(check, data),
            "exact_check",
        )
    ]
    if len(flagged):
        header = [*_pairing_header(data), "figure", "games", "sampled", "exact", "standard error", "z", "approximate"]
        rows = [
            [
                *_pairing_cells(row, data),
                label(row["quantity"]),
                f"{row['games']:,}",
                f"{row['sampled']:.6g}",
                f"{row['exact']:.6g}",
                f"{row['se']:.3g}",
                _z(row["z"]),
                "yes" if row["approximate"] else "no",
            ]
            for row in flagged.iter_rows(named=True)
        ]
        tables.append(Table("Flagged figures: possible bugs", header, rows))
    return Section(
        "Sampled against exact",
        text,
        tables,
        [
            (
                "sampled_against_exact",
                "First-player score of each self-play pairing: its games' estimate with its 95% Wilson interval (dot and "
                "bar) and its exact value (cross).",
            )
        ],
    )


def _check_rows(check: pl.DataFrame, data: ReportData) -> list[list[str]]:
    """Per pairing: its games, the figures tested, the z farthest from 0 (which figure) and how many are flagged."""
    rows = []
    for _, part in check.group_by(*KEYS, maintain_order=True):
        largest = (
            part.with_columns(pl.col("z").abs().alias("_size")).sort("_size", descending=True, nulls_last=True).row(0, named=True)
        )
        rows.append(
            [
                *_pairing_cells(largest, data),
                f"{largest['games']:,}",
                f"{len(part)}",
                f"{_z(largest['z'])} ({label(largest['quantity'])})",
                f"{part['flagged'].sum()}",
            ]
        )
    return rows


def _alarm(data: ReportData) -> list[str]:
    """The report's first words when a sampled figure lies more than 4 standard errors from its
    exact value: every such figure, none left out."""
    if data.exact_check is None or not data.exact_check["flagged"].any():
        return []
    flagged = data.exact_check.filter("flagged")
    return [
        f"POSSIBLE BUG: {_plural(len(flagged), 'sampled figure')} of this study {'lies' if len(flagged) == 1 else 'lie'} "
        f"more than {FLAG_Z:g} standard errors from {'its' if len(flagged) == 1 else 'their'} exact value (|z| > {FLAG_Z:g}; "
        "see Sampled against exact). The games were played by the engine whose exact outcomes they are tested against: "
        "check the engine, the batch player, the records and the metrics before trusting this report.",
        *(_finding(row, data) for row in flagged.iter_rows(named=True)),
    ]


def _finding(row: dict[str, Any], data: ReportData) -> str:
    """One tested figure in words: pairing, figure, sampled and exact values, z."""
    approximate = f"; approximate, exact binomial p {row['p']:.2g}" if row["approximate"] else ""
    return (
        f"{_figure(row, data)}: sampled {row['sampled']:.6g} in {row['games']:,} games, exact {row['exact']:.6g}, "
        f"z = {_z(row['z'])}{approximate}"
    )


def _figure(row: dict[str, Any], data: ReportData) -> str:
    """A tested figure's name: its pairing (and rule set) and its quantity in words."""
    rules = f"{row['rules']}, " if data.several_rules else ""
    return f"{rules}{row['south']} v {row['north']}, {label(row['quantity'])}"


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


def _solved_words(data: ReportData, rules: str) -> list[str]:
    if data.openings is None or rules not in data.openings["rules"].to_list():
        return []
    openings = data.openings.filter(pl.col("rules") == rules)
    value = int(openings["value"].max())  # type: ignore[arg-type]
    total = _total_stones(rules)
    winner = "South, who moves first," if value > 0 else "North, who moves second,"
    result = (
        "a draw"
        if value == 0
        else f"{winner} wins by {abs(value)} stones ({(total + abs(value)) // 2} to {(total - abs(value)) // 2})"
    )
    best = openings.filter("best")["pit"].to_list()
    moves = "; ".join(f"pit {row['pit']} {_stones(row['value'])}" for row in openings.iter_rows(named=True))
    only = (
        f"South's only best first move is pit {best[0]}"
        if len(best) == 1
        else f"South's best first moves are pits {_listed(best)}"
    )
    return [
        f"**The game is solved.** With perfect play on both sides, {result}. {only}; "
        f"the value of each first move for South, in stones of final margin: {moves}."
    ]


def _first_player_words(data: ReportData, rules: str) -> list[str]:
    scores = []
    for name in data.strategies(rules):
        value = _self_play_score(data, rules, name)
        if value is not None:
            scores.append((f"{name} {value[0]}", value[1]))
    text = []
    if scores:
        text.append(
            f"**{_seat_verdict(data, rules)}** Between two copies of the same strategy, South's score (a win 1, a draw "
            f"one half) is: {_exact_tagged(scores)}. A fair seat would give 0.5."
        )
    pairs, worse, better = _significant_seats(data.seat_effect.filter(pl.col("rules") == rules))
    if pairs:
        text.append(
            f"Over both seat orders of each of the {pairs} pairs of different strategies, which cancels their "
            f"strengths, moving first significantly lowers the score in {worse} and raises it in {better} (Holm-adjusted "
            f"p < 0.05); in the other {pairs - worse - better} the games detect no seat effect."
        )
    return text


def _exact_tagged(parts: Sequence[tuple[str, bool]]) -> str:
    """Figures joined by semicolons, saying which are exact (a flag beside each): "(exact)" after
    each exact one, or once after all of them when every one is; sampled ones carry their interval."""
    if all(exact for _, exact in parts):
        return "; ".join(words for words, _ in parts) + " (exact values)"
    return "; ".join(f"{words} (exact)" if exact else words for words, exact in parts)


def _significant_seats(seat_effect: pl.DataFrame) -> tuple[int, int, int]:
    """Of the pairs of different strategies in ``seat_effect``: how many, and in how many moving
    first is significantly worse and better (Holm-adjusted p < 0.05)."""
    pairs = seat_effect.filter(pl.col("strategy_a") != pl.col("strategy_b"))
    significant = pairs.filter(pl.col("seat_effect_p_holm") < 0.05)
    worse = significant.filter(pl.col("seat_effect") < 0).height
    return pairs.height, worse, significant.filter(pl.col("seat_effect") > 0).height


def _seat_verdict(data: ReportData, rules: str) -> str:
    """What self-play says of the first seat, strategy by strategy, in a sentence: the sign of
    each strategy's self-play seat effect where it is exact or significant (Holm); exactly fair
    where its exact value is 0, unclear where its games do not decide; one verdict for all only
    when every strategy agrees."""
    self_play = data.seat_effect.filter((pl.col("rules") == rules) & (pl.col("strategy_a") == pl.col("strategy_b")))
    found: dict[str, list[str]] = {"worse": [], "better": [], "fair": [], "unclear": []}
    for row in self_play.iter_rows(named=True):
        exact, effect = row["seat_effect_exact"], row["seat_effect"]
        if exact is not None:
            kind = "fair" if abs(exact) < 1e-9 else ("better" if exact > 0 else "worse")
        elif row["seat_effect_p_holm"] is not None and row["seat_effect_p_holm"] < 0.05:
            kind = "better" if effect > 0 else "worse"
        else:
            kind = "unclear"
        found[kind].append(row["strategy_a"])
    fair = f"exactly fair for {_listed(found['fair'])} (an exact score of 1/2)" if found["fair"] else ""
    unclear = f"for {_listed(found['unclear'])} the games show no clear seat effect" if found["unclear"] else ""
    if not found["worse"] and not found["better"]:
        if fair and not unclear:
            return f"Moving first is {fair}."
        return "Moving first is neither a clear advantage nor a clear disadvantage" + (f"; it is {fair}." if fair else ".")
    unanimous = not (found["fair"] or found["unclear"]) and not (found["worse"] and found["better"]) and self_play.height > 1
    signed = [
        f"{words} for {'every strategy' if unanimous else _listed(found[kind])}"
        for kind, words in (("worse", "a disadvantage"), ("better", "an advantage"))
        if found[kind]
    ]
    rest = "".join(f"; {part}" for part in (f"it is {fair}" if fair else "", unclear) if part)
    return f"Moving first is {' but '.join(signed)}{rest}."


def _self_play_score(data: ReportData, rules: str, name: str) -> tuple[str, bool] | None:
    """A strategy's self-play first-player score in words, and whether it is exact: exact when
    known, else sampled with its interval."""
    keys = {"rules": rules, "south": name, "north": name}
    exact = _exact_row(data, keys)
    if exact is not None:
        return f"{exact['first_player_score']:.3f}", True
    found = data.outcomes.filter(*(pl.col(key) == value for key, value in keys.items()))
    return None if not found.height else (_plain(found.row(0, named=True), "first_player", 3), False)


def _length_words(data: ReportData, rules: str) -> list[str]:
    pairings = data.ludii.filter(pl.col("rules") == rules)
    self_play = pairings.filter(SELF_PLAY)
    if not self_play.height:
        return []
    parts = []
    for row in self_play.iter_rows(named=True):
        exact = _exact_row(data, row)
        if exact is not None:
            parts.append((f"{row['south']} {exact['mean_plies']:.1f}", True))
        else:
            parts.append((f"{row['south']} {row['Duration']:.1f} [{row['Duration_low']:.1f}, {row['Duration_high']:.1f}]", False))
    capped = round((pairings["Timeouts"] * pairings["games"]).sum())
    longest = int(pairings["Duration_max"].max())  # type: ignore[arg-type]
    cap = Rules.from_name(rules).ply_cap
    ending = (
        f"no game reached the cap of {cap} plies"
        if capped == 0
        else f"{_plural(capped, 'game')} reached the cap of {cap} plies and {'was' if capped == 1 else 'were'} stopped there"
    )
    return [
        f"**How long games last.** Mean length in self-play, in plies (one player's move): {_exact_tagged(parts)}. "
        f"The longest game of the study lasted {longest} plies; {ending}."
    ]


def _event_words(data: ReportData, rules: str) -> list[str]:
    """How often the rules fire in the main pairing, in words; a rule the rule set does not have
    is said to be absent, never to fire 0% of the time (pipeline.metrics.events leaves it out)."""
    main = data.main_pairings().filter(pl.col("rules") == rules).row(0, named=True)
    exact = _exact_row(data, main)
    events = data.events.filter(*(pl.col(key) == main[key] for key in KEYS))
    shares = {}
    for row in events.iter_rows(named=True):
        shares[row["event"]] = exact[f"fires_{row['event']}"] if exact is not None else row["fired_share"]

    def share(name: str, words: str) -> str:
        return f"never {words}" if shares[name] == 0 else f"{words} in {100 * shares[name]:.2f}% of games"

    played = Rules.from_name(rules)
    pairing = f"{main['south']} v {main['north']}" if main["south"] != main["north"] else f"{main['south']} players"
    empty = (
        "no player ever starts a turn facing an empty row"
        if shares["feeding_active"] == 0
        else f"a player starts a turn facing an empty row in {100 * shares['feeding_active']:.2f}% of games"
    )
    if played.feeding:
        forced, lapsed = share("feeding_forced", "forces a move"), share("feeding_lapsed", "lapses")
        feeding = f"{empty}, and must feed it; feeding {forced} and {lapsed}"
    else:
        feeding = f"{empty} (this rule set has no feeding rule, so nothing is due)"
    if played.grand_slam == "prohibited":
        blocked, ended = share("grand_slam_blocked", "takes a move away"), share("grand_slam_end", "ends the game")
        slam = f"the grand-slam ban {blocked} and {ended}"
    else:
        slam = f"grand slams are legal under this rule set ({played.grand_slam.replace('_', ' ')})"
    ends = (
        "no game ends with an empty row to move from"
        if shares["empty_row_end"] == 0
        else f"{100 * shares['empty_row_end']:.2f}% of games end with an empty row to move from"
    )
    if "singleton_end" in shares:
        ends = f"{100 * shares['singleton_end']:.2f}% of games end with only single stones left to the player to move, and {ends}"
    return [
        f"**How often the rules fire** (games between {pairing}{', exact' if exact is not None else ', sampled'}): "
        f"{feeding}; {slam}; {ends}."
    ]


def _game_section(data: ReportData) -> Section:
    """The game in brief with its board, the strategies, and every rule event in words."""
    strategies = [[name, describe(name)] for name in data.strategies()]
    glossary = [
        [short(name), f"`{name}`", event(name)] for name in GAME_EVENTS + tuple(n for n in engine.EVENTS if n not in GAME_EVENTS)
    ]
    return Section(
        "The game and the players",
        [*GAME, f"The full rules, with worked examples, are in {RULES_MD}.{_rule_set_words(data)}"],
        [
            Table("The strategies", ["strategy", "what it does"], strategies),
            Table("The rule events: what the report counts", ["event", "column", "what it means"], glossary),
        ],
        [("board", f"The board at the start: {_stones_per_pit(data)} in each pit; stones are sown counter-clockwise (arrows).")],
    )


def _stones_per_pit(data: ReportData) -> str:
    count = Rules.from_name(data.rule_sets["rules"][0]).stones_per_pit
    return _plural(count, "stone")


def _rule_set_words(data: ReportData) -> str:
    """What rule set the study plays, when it is not RULES.md's alone."""
    names = data.rule_sets["rules"].to_list()
    if names == [Rules().name]:
        return ""
    return (
        f" This study plays {_plural(len(names), 'rule set')}: {_listed(names)}; a rule set's name spells out every "
        "field that differs from RULES.md (RULES.md: Rule-set names). The board below is that of the first."
    )


def _first_player_section(data: ReportData, exact_pending: str | None = None) -> Section:
    """Who gains from moving first: the seat effect of every pair of strategies (both seat
    orders pooled, so that strength cancels) and self-play."""
    table = data.seat_effect
    rows = [
        [
            *_rules_cells(row, data),
            row["strategy_a"] if row["strategy_a"] == row["strategy_b"] else f"{row['strategy_a']} and {row['strategy_b']}",
            f"{row['games']:,}",
            f"{row['first_player_wins']:,} / {row['draws']:,} / {row['second_player_wins']:,}",
            *_beside(
                [f"{row['seat_effect']:+.3f} [{row['seat_effect_low']:+.3f}, {row['seat_effect_high']:+.3f}]"],
                ["n/a" if row["seat_effect_exact"] is None else f"{row['seat_effect_exact']:+.6f}"],
                data,
            ),
            _p_value(row["seat_effect_p"]),
            _p_value(row["seat_effect_p_holm"]),
        ]
        for row in table.iter_rows(named=True)
    ]
    header = [*_rules_header(data), "strategies", "games", "first player wins / draws / loses"]
    header += [*_beside(["seat effect"], ["seat effect, exact"], data), "p", "p (Holm)"]
    pairs, worse, better = _significant_seats(table)
    text = [
        "A game between two different strategies mixes two things: which seat moves first and which strategy is "
        "stronger. Played both ways round, a pair of strategies moves first equally often, so pooling the two seat "
        "orders cancels their strengths and leaves the effect of the seat: the **seat effect** is the pooled first "
        "player's score minus 1/2 (a win counts 1, a draw 1/2), negative when moving first is a disadvantage. A "
        "strategy's self-play is a pair of its own.",
        f"**Of {_plural(pairs, 'pair')} of different strategies, moving first is a significant disadvantage in "
        f"{worse} and a significant advantage in {better}** (Holm-adjusted p < 0.05 over every pair"
        f"{' and rule set' if data.several_rules else ''}).",
        "The test is the exact sign test on the decisive games (draws carry no sign), two-sided against a seat effect "
        "of 0; pooling two seat orders makes it conservative. The interval is built to agree with it (see Methods). "
        f"{_unequal_orders(table)}"
        "tables/seat_effect.csv has every pair at full precision; the outcome of every ordered pairing is in the "
        "appendix.",
    ]
    return Section(
        "Who gains from moving first",
        text,
        [Table("Seat effect per pair of strategies", header, rows, "seat_effect")],
        [
            (
                "seat_effect",
                "Seat effect per pair of strategies (both seat orders pooled) and in self-play, 95% intervals"
                f"{_crosses(data, exact_pending)}. Left of the dashed line, moving first is a disadvantage.",
            ),
            (
                "pairing_scores",
                "First player's score in every ordered pairing (rows: South's strategy, columns: North's); "
                f"{_exact_or_sampled(data, exact_pending)}. Between different strategies it mixes seat and strength.",
            ),
        ],
    )


def _crosses(data: ReportData, exact_pending: str | None) -> str:
    """What the seat-effect figure's crosses are, if it has any (pipeline.report.figures)."""
    if data.seat_effect["seat_effect_exact"].is_not_null().any():
        return "; crosses are exact values"
    return f"; no exact values: {exact_pending}" if exact_pending else ""


def _exact_or_sampled(data: ReportData, exact_pending: str | None) -> str:
    """Whether the pairing-score grid shows exact scores or estimates."""
    if data.exact is not None:
        return "exact where the study computed it, else its games' estimate"
    return f"its games' estimates; {exact_pending}" if exact_pending else "its games' estimates"


def _unequal_orders(table: pl.DataFrame) -> str:
    """The sentence for pairs whose two seat orders played unequal numbers of games, if any."""
    unequal = table.filter(pl.col("seat_effect_test") != "sign test")
    if not unequal.height:
        return ""
    pairs = _listed([f"{row['strategy_a']} and {row['strategy_b']}" for row in unequal.iter_rows(named=True)])
    return (
        f"The two seat orders of {pairs} played different numbers of games: pooled, the larger would weigh more and let "
        "strength back in, so their seat effect is the mean of the two orders' scores less 1/2, with a normal interval "
        "and z test. "
    )


def _methods_section(data: ReportData) -> Section:
    """How every figure of the report is estimated and tested, and how well the intervals cover."""
    text = [
        "**Estimates and intervals.** All intervals are two-sided 95%. A share of games (South wins, draws, games in "
        "which an event fires) has its Wilson score interval (Wilson 1927). The first player's score, a win counting 1 "
        "and a draw 1/2, is 1/2 + d (pi - 1/2), d being the share of decisive games and pi the first player's share of "
        "them; its interval is the range of that expression over the Clopper-Pearson interval of pi (Clopper and "
        "Pearson 1934) and the Wilson interval of d. A mean count per game and a rate per 100 turns have a score "
        "interval for a rate (the Poisson score interval, with a dispersion estimated from the games as clusters): "
        "it is the usual normal interval for a frequent event, and unlike it keeps an upper bound above 0 for an "
        "event seen once or never. A mean length has its normal interval (thousands of games).",
        "**Tests.** The first player's score is tested against 1/2 by the exact sign test (the exact binomial test of "
        "the decisive games, two-sided; draws carry no sign): exact at any number of games, so 5 wins in 5 games gives "
        "p = 0.0625, not a p near 0. Its interval holds 1/2 exactly when p >= 0.05, so the two never disagree. p-values "
        "below 0.001 are printed as p < 0.001.",
        "**Many comparisons.** Each table of tests is a family: the p-values of the first-player tests of every ordered "
        "pairing and rule set, and those of the seat effects of every pair and rule set, are adjusted by Holm's "
        "step-down method (Holm 1979), which keeps the chance of any false rejection in the family below 5% whatever the "
        "dependence between the tests; columns headed p (Holm) give the adjusted values, and the words of the report "
        "rely on them."
        + (
            ""
            if data.exact_check is None
            else " The test of every sampled figure against its exact value (Sampled against exact) flags at "
            f"|z| > {FLAG_Z:g}, a chance of {FLAG_P:.1e} per honest figure: over the {data.exact_check.height:,} figures "
            f"tested the chance of a false alarm is at most {min(1.0, data.exact_check.height * FLAG_P):.2f} (Bonferroni)."
        ),
        "**Seat against strength.** Only self-play and pairs pooled over both seat orders measure the seat; an ordered "
        "pairing of two different strategies measures the seat and their strengths together, and the report never "
        "reads a seat effect into it.",
    ]
    tables = []
    if data.coverage is not None:
        text.append(
            "**Coverage.** The intervals are checked where they are weakest, in small pairings and for rare events: "
            f"{_coverage_setting(data.coverage)} The table gives, for each figure, how many of the replications' 95% "
            "intervals hold its exact value, for the interval of the report and for the normal interval it replaced "
            "(pipeline.coverage; tables/coverage.csv). A Wilson interval's coverage swings with the true share and "
            "dips a few points below 95% at some shares of small samples (Brown, Cai and DasGupta 2001, Statistical "
            "Science 16:101); the table shows where."
        )
        tables.append(_coverage_table(data.coverage))
    return Section("Methods", text, tables)


def _coverage_setting(coverage: pl.DataFrame) -> str:
    row = coverage.row(0, named=True)
    return (
        f"{row['replications']:,} independent pairings of {row['games']} games of {row['south']} v {row['north']} "
        f"(seeded), each with its intervals, against the exact values of the pairing."
    )


def _coverage_table(coverage: pl.DataFrame) -> Table:
    rows = []
    for (figure,), part in coverage.group_by("figure", maintain_order=True):
        cells = {
            row["interval"]: f"{100 * row['coverage']:.1f} [{100 * row['coverage_low']:.1f}, {100 * row['coverage_high']:.1f}]"
            for row in part.iter_rows(named=True)
        }
        exact = part["exact"][0]
        name, _, what = str(figure).rpartition(": ")
        rows.append(
            [
                f"{short(name)}: {what}" if name else what,
                f"{exact:.4g}",
                cells.get("report", "n/a"),
                cells.get("normal", "the same"),
            ]
        )
    return Table(
        "Coverage of the 95% intervals (%)", ["figure", "exact value", "report's interval", "normal interval"], rows, "coverage"
    )


def _total_stones(rules: str) -> int:
    return 6 * Rules.from_name(rules).stones_per_pit


def _stones(value: int) -> str:
    return "draws" if value == 0 else f"{'wins' if value > 0 else 'loses'} by {abs(value)}"


def _listed(values: Sequence[object]) -> str:
    words = [str(value) for value in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


# ---------------------------------------------------------------------------------------------
# Cells and phrases


def _row(table: pl.DataFrame, keys: dict[str, Any]) -> dict[str, Any]:
    return table.filter(*(pl.col(key) == value for key, value in keys.items())).row(0, named=True)


def _rules_header(data: ReportData) -> list[str]:
    """A rules column, in a study of several rule sets only (_rules_cells fills it)."""
    return ["rules"] if data.several_rules else []


def _rules_cells(row: dict[str, Any], data: ReportData) -> list[str]:
    return [row["rules"]] if data.several_rules else []


def _pairing_header(data: ReportData) -> list[str]:
    return [*_rules_header(data), "South", "North"]


def _pairing_cells(row: dict[str, Any], data: ReportData) -> list[str]:
    return [*_rules_cells(row, data), row["south"], row["north"]]


def _share(row: dict[str, Any], name: str, digits: int = 1) -> str:
    return (
        f"{100 * row[f'{name}_share']:.{digits}f} [{100 * row[f'{name}_low']:.{digits}f}, {100 * row[f'{name}_high']:.{digits}f}]"
    )


def _plain(row: dict[str, Any], name: str, digits: int) -> str:
    value = row[f"{name}_share"] if f"{name}_share" in row else row[f"{name}_score"]
    return f"{value:.{digits}f} [{row[f'{name}_low']:.{digits}f}, {row[f'{name}_high']:.{digits}f}]"


def _ludii_cell(name: str, value: float | None) -> str:
    if value is None or value != value:  # no ply to measure: games of 0 plies
        return "n/a"
    # Repetitions are rare (a few in ten million states): three significant digits, not four decimals.
    if name.startswith("PositionalRepetition"):
        return f"{value:.3g}"
    return f"{value:.1f}" if name == "Duration_p99" else f"{value:.4f}"


def _rate(row: dict[str, Any]) -> str:
    if row["per_100_turns"] is None:
        return "n/a"
    return f"{row['per_100_turns']:.3f} [{row['per_100_turns_low']:.3f}, {row['per_100_turns_high']:.3f}]"


def _p_value(p: float | None) -> str:
    """A p-value in a table cell: "< 0.001" below a thousandth, else two significant digits."""
    return "n/a" if p is None else p_text(p).removeprefix("= ")


def _p_text(p: float | None) -> str:
    """A p-value in a sentence, after "p": "= 0.062" or "< 0.001"."""
    return "n/a" if p is None else p_text(p)


def _start_values(table: pl.DataFrame) -> list[tuple[str, int]]:
    return [
        (str(rules), int(value)) for rules, value in table.select("rules", "start_value").unique(maintain_order=True).iter_rows()
    ]


def _start_words(rules: str, value: int) -> str:
    """The value of a rule set's start in words: who wins by how much under perfect play."""
    total = _total_stones(rules)
    if value == 0:
        return f"a draw with perfect play on both sides ({total // 2} stones each)"
    winner = "South (first)" if value > 0 else "North (second)"
    score = f"{(total + abs(value)) // 2} to {(total - abs(value)) // 2}"
    return f"{winner} wins by {abs(value)} stones with perfect play on both sides ({score})"


def _described(pairings: pl.DataFrame) -> str:
    """The pairings of a table keyed by pairing, as "south v north, ..."."""
    return ", ".join(f"{row['south']} v {row['north']}" for row in pairings.iter_rows(named=True))


def _anchor_text(first_move: pl.DataFrame) -> str:
    anchors = first_move["anchor"].unique(maintain_order=True).to_list()
    if anchors == [None]:
        return "Ratings are centred on their mean."
    return f"{' and '.join(str(anchor) for anchor in anchors if anchor)} is rated 0; the others relative to it."


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _exact_row(data: ReportData, keys: dict[str, Any]) -> dict[str, Any] | None:
    """The exact outcome of a pairing (the KEYS of ``keys``), None when the study has none."""
    if data.exact is None:
        return None
    found = data.exact.filter(*(pl.col(key) == keys[key] for key in KEYS))
    return found.row(0, named=True) if found.height else None


def _exact_cell(data: ReportData, keys: dict[str, Any], column: str, form: str, scale: float = 1.0) -> str:
    """A column of the pairing's exact outcome, formatted (times ``scale``); n/a without one."""
    exact = _exact_row(data, keys)
    return "n/a" if exact is None else form.format(scale * exact[column])


def _exact_outcome_cells(data: ReportData, row: dict[str, Any]) -> list[str | None]:
    """The exact cells beside _outcome_cells without North's wins: South's wins, draws and the
    score (None: no exact column)."""
    return [
        None,
        _exact_cell(data, row, "south_win", "{:.3f}", 100),
        _exact_cell(data, row, "draw", "{:.3f}", 100),
        _exact_cell(data, row, "first_player_score", "{:.6f}"),
        None,
        None,
    ]


def _beside(sampled: list[str], exact: Sequence[str | None], data: ReportData) -> list[str]:
    """Sampled cells (or headers), each followed by its exact one when the study has exact outcomes
    (an exact entry of None: that cell has none)."""
    if data.exact is None:
        return sampled
    return [cell for pair in zip(sampled, exact, strict=True) for cell in pair if cell is not None]


def _exact_note(data: ReportData) -> str:
    """The sentence that introduces a table's exact columns, when it has them."""
    if data.exact is None:
        return ""
    return (
        " Beside each sampled figure, its exact value (engine.exact_outcome, no sampling error) where the study "
        'computed one; n/a where it did not (a pairing with mcts, or not self-play under exact = "self-play").'
    )


def _z(z: float) -> str:
    return f"{z:+.2f}" if math.isfinite(z) else ("+infinite" if z > 0 else "-infinite")


def _flag_count(flagged: int) -> str:
    return "none flagged" if flagged == 0 else f"{flagged:,} flagged (|z| > {FLAG_Z:g}), listed at the top of the report"


def _per_ply(table: pl.DataFrame | None) -> pl.DataFrame:
    """A table of compute's that replays every game, which a report cannot do without."""
    if table is None:
        raise ValueError("a report needs the per-ply tables: compose the tables of compute(games, manifest), per_ply=True")
    return table
