"""The study report's section comparing its rule sets (the study's own and its variants)."""

from __future__ import annotations

from engine.game import GAME_EVENTS
from pipeline.report.document import Section, Table
from pipeline.report.prose import interval
from pipeline.runs.records import IS_SELF_PLAY, PAIRING_COLUMNS
from pipeline.study.report.data import ReportData
from pipeline.study.report.sections.cells import RULES_MD, exact_cell, exact_note, plain, put_beside, ruled_out, share_cell
from pipeline.study.report.words import short


def variant_sections(data: ReportData) -> list[Section]:
    rule_sets = [
        [row["variant"], row["rules"], f"{row['games']:,}", "n/a" if row["start_value"] is None else f"{row['start_value']:+d}"]
        for row in data.rule_sets.iter_rows(named=True)
    ]
    self_play = data.with_variant(data.outcomes.filter(IS_SELF_PLAY)).join(
        data.ludii.select(*PAIRING_COLUMNS, "Duration", "Duration_low", "Duration_high"),
        on=list(PAIRING_COLUMNS),
        maintain_order="left",
    )
    rows = [
        [
            row["variant"],
            row["south"],
            f"{row['games']:,}",
            *put_beside(
                [
                    plain(row, "first_player", 3),
                    share_cell(row, "draw"),
                    interval(row["Duration"], row["Duration_low"], row["Duration_high"], ".2f"),
                ],
                [
                    exact_cell(data, row, "first_player_score", "{:.6f}"),
                    exact_cell(data, row, "draw", "{:.3f}", 100),
                    exact_cell(data, row, "mean_plies", "{:.4f}"),
                ],
                data,
            ),
        ]
        for row in self_play.iter_rows(named=True)
    ]
    fired = data.with_variant(data.main_pairings().join(data.events, on=list(PAIRING_COLUMNS), maintain_order="left"))
    event_rows = [
        [
            row["variant"],
            f"{row['south']} v {row['north']}",
            short(row["event"]),
            *put_beside([share_cell(row, "fired", 2)], [exact_cell(data, row, f"fires_{row['event']}", "{:.4f}", 100)], data),
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
                f"first-player score, the share of draws and the mean length of a game.{exact_note(data)}"
            ],
            [
                Table("Rule sets", ["variant", "rules", "games", "value of the start (perfect play)"], rule_sets, "rule_sets"),
                Table(
                    "Self-play per rule set",
                    ["variant", "strategy", "games", *put_beside(self_play_header, self_play_exact, data)],
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
                + exact_note(data)
                + ruled_out(data)
            ],
            [
                Table(
                    "Games where each rule fires",
                    [
                        "variant",
                        "pairing",
                        "event",
                        *put_beside(["games where it fires (%)"], ["games where it fires, exact (%)"], data),
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
