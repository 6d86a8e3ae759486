"""The study report's sections on the games themselves: their length, the rule events (feeding,
grand slam, captures) and the rule set played.
"""

from __future__ import annotations

import polars as pl

import engine
from engine.game import GAME_EVENTS, Rules
from pipeline.report.document import Section, Table
from pipeline.report.prose import interval, listed, plural
from pipeline.runs.records import IS_SELF_PLAY, PAIRING_COLUMNS
from pipeline.study.report.data import ReportData
from pipeline.study.report.sections.cells import (
    RULES_MD,
    described,
    exact_cell,
    exact_note,
    exact_row,
    exact_tagged,
    pairing_cells,
    pairing_header,
    put_beside,
    rate_cell,
    ruled_out,
    rules_cells,
    rules_header,
    share_cell,
)
from pipeline.study.report.words import GAME, describe, event, short


def length_section(data: ReportData) -> Section:
    capped = bool(data.ludii["Timeouts"].max())
    rows = [
        [
            *pairing_cells(row, data),
            *put_beside(
                [interval(row["Duration"], row["Duration_low"], row["Duration_high"], ".2f")],
                [exact_cell(data, row, "mean_plies", "{:.4f}")],
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
    header = [*pairing_header(data), *put_beside(["mean plies"], ["mean plies, exact"], data)]
    header += ["median", "90th percentile", "99th percentile", "longest", *(["at the ply cap (%)"] if capped else [])]
    subjects = "the largest pairing of each rule set" if data.several_rules else "the self-play pairings"
    cap = "" if capped else " No game of the study reached the ply cap."
    return Section(
        "Game length",
        ["Plies per game (a ply is one player's move)." + cap + exact_note(data)],
        [Table("Game length per pairing", header, rows, "ludii")],
        [
            (
                "game_length",
                f"Game length in {subjects}: the share of each one's games over by each length, on one axis; it stops where "
                "99.5% of every pairing's games are over.",
            )
        ],
    )


def events_section(data: ReportData) -> Section:
    main = data.main_pairings()
    table = data.events.join(main, on=list(PAIRING_COLUMNS), how="semi")
    rows = [
        [
            *rules_cells(row, data),
            short(row["event"]),
            f"{row['fired']:,}",
            f"{row['total']:,}",
            *put_beside(
                [share_cell(row, "fired", 2), interval(row["mean"], row["mean_low"], row["mean_high"], ".4f")],
                [
                    exact_cell(data, row, f"fires_{row['event']}", "{:.4f}", 100),
                    exact_cell(data, row, f"mean_{row['event']}", "{:.6f}"),
                ],
                data,
            ),
            rate_cell(row),
        ]
        for row in table.iter_rows(named=True)
    ]
    sampled = ["games where it fires (%)", "mean per game"]
    header = [
        *rules_header(data),
        "event",
        "games where it fired",
        "count",
        *put_beside(sampled, ["fires, exact (%)", "mean, exact"], data),
        "per 100 turns",
    ]
    return Section(
        "Rule events",
        [
            f"How often each rule of {RULES_MD} fires, in the pairing with the most games ({described(main)}); "
            "the glossary (The game and the players) says what each event means, and tables/events.csv has every "
            "pairing. The raw counts come first: the games in which the event fired and its count over all games. "
            "Counts of stones and pits are stones and pits; the others are turns or games. The intervals of a mean "
            f"and of a rate are score intervals that keep their coverage for a rare event (Methods).{exact_note(data)}"
            f"{ruled_out(data)}"
        ],
        [Table("Rule events", header, rows, "events")],
        [
            (
                "rule_events",
                "Share of games in which each rule fires, self-play pairings, 95% Wilson intervals; on a log axis when "
                "the shares span orders of magnitude (linear near 0, so that a share of 0 shows).",
            )
        ],
    )


def events_by_ply_section(data: ReportData) -> Section:
    return Section(
        "Events by ply",
        [
            f"When in the game each rule fires, in {described(data.main_pairings())}: the share of the turns played at "
            "each ply on which a turn event fires, and the share of games reaching a ply that end there with each end "
            "event. tables/events_by_ply.csv has every pairing and ply."
        ],
        [],
        [
            (
                "events_by_ply",
                "Turn events by ply (the first capture given up is left out: it can happen at the first move only), 95% Wilson "
                "bands, log scale.",
            ),
            (
                "end_events_by_ply",
                "End events: of the games reaching a ply, the share that end there, 95% Wilson bands, log scale.",
            ),
        ],
    )


def length_words(data: ReportData, rules: str) -> list[str]:
    pairings = data.ludii.filter(pl.col("rules") == rules)
    self_play = pairings.filter(IS_SELF_PLAY)
    if not self_play.height:
        return []
    parts = []
    for row in self_play.iter_rows(named=True):
        exact = exact_row(data, row)
        if exact is not None:
            parts.append((f"{row['south']} {exact['mean_plies']:.1f}", True))
        else:
            parts.append((f"{row['south']} {interval(row['Duration'], row['Duration_low'], row['Duration_high'], '.1f')}", False))
    capped = round((pairings["Timeouts"] * pairings["games"]).sum())
    longest = int(pairings["Duration_max"].max())  # type: ignore[arg-type]
    cap = Rules.from_name(rules).ply_cap
    ending = (
        f"no game reached the cap of {cap} plies"
        if capped == 0
        else f"{plural(capped, 'game')} reached the cap of {cap} plies and {'was' if capped == 1 else 'were'} stopped there"
    )
    return [
        f"**How long games last.** Mean length in self-play, in plies (one player's move): {exact_tagged(parts)}. "
        f"The longest game of the study lasted {longest} plies; {ending}."
    ]


def event_words(data: ReportData, rules: str) -> list[str]:
    """How often the rules fire in the main pairing, in words; a rule the rule set does not have
    is said to be absent, never to fire 0% of the time (pipeline.analysis.metrics.events leaves it out)."""
    main = data.main_pairings().filter(pl.col("rules") == rules).row(0, named=True)
    exact = exact_row(data, main)
    events = data.events.filter(*(pl.col(key) == main[key] for key in PAIRING_COLUMNS))
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


def game_section(data: ReportData) -> Section:
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
    return plural(count, "stone")


def _rule_set_words(data: ReportData) -> str:
    """What rule set the study plays, when it is not RULES.md's alone."""
    names = data.rule_sets["rules"].to_list()
    if names == [Rules().name]:
        return ""
    return (
        f" This study plays {plural(len(names), 'rule set')}: {listed(names)}; a rule set's name spells out every "
        "field that differs from RULES.md (RULES.md: Rule-set names). The board below is that of the first."
    )
