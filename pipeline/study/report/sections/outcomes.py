"""The study report's sections on who wins: the headline, the first player's advantage (sampled and
exact) and the words of the abstract about it.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from engine.game import GAME_EVENTS
from pipeline.report.document import Section, Table
from pipeline.report.prose import figure, interval, listed, p_value, p_words, plural
from pipeline.study.report.data import ReportData
from pipeline.study.report.sections.cells import (
    EXACT_SCORE_DIGITS,
    exact_note,
    exact_outcome_cells,
    exact_row,
    exact_tagged,
    pairing_cells,
    pairing_header,
    plain,
    put_beside,
    rules_cells,
    rules_header,
    share_cell,
    significant_seats,
    start_values,
    start_words,
    stones_words,
    swept_words,
    table_row,
    total_stones,
    unmeasured_seats,
)
from pipeline.study.report.words import short


def headline_section(data: ReportData) -> Section:
    """The figures a reader wants first, per rule set: those of its pairing with the most games,
    formatted exactly as in the tables below; its exact values instead where the study has them."""
    text = []
    main = data.main_pairings()
    for keys in main.iter_rows(named=True):
        variant = table_row(data.rule_sets, {"rules": keys["rules"]})["variant"]
        name = f"{variant} ({keys['rules']})" if data.several_rules and variant != keys["rules"] else keys["rules"]
        outcome = table_row(data.outcomes, keys)
        opening = f"**{name}, {keys['south']} (South) v {keys['north']} (North), {outcome['games']:,} games.** "
        exact = exact_row(data, keys)
        text.append(opening + (_sampled_headline(data, keys) if exact is None else _exact_headline(outcome, exact)))
    if data.agreement is not None:
        values = start_values(data.agreement)
        if len(values) == 1:
            text.append(f"**Perfect play.** {start_words(*values[0])}.")
        else:
            words = "; ".join(f"{rules}: {start_words(rules, value)}" for rules, value in values)
            text.append(f"**Perfect play.** {words}.")
    return Section("Headlines", text)


def _sampled_headline(data: ReportData, keys: dict[str, Any]) -> str:
    outcome = table_row(data.outcomes, keys)
    length = table_row(data.ludii, keys)
    fired = data.events.filter(*(pl.col(key) == value for key, value in keys.items()))
    rates = "; ".join(
        f"{short(row['event'])} {share_cell(row, 'fired', 2)}"
        for row in fired.iter_rows(named=True)
        if row["event"] in GAME_EVENTS
    )
    return (
        f"First-player score {plain(outcome, 'first_player', 3)} "
        f"(two-sided sign test against 1/2: p {p_words(outcome['first_player_p'])}); "
        f"South wins {share_cell(outcome, 'south')}%, draws {share_cell(outcome, 'draw')}%. "
        f"Mean length {interval(length['Duration'], length['Duration_low'], length['Duration_high'], '.2f')} plies. "
        f"Games in which each rule fires (%): {rates}."
    )


def _exact_headline(outcome: dict[str, Any], exact: dict[str, Any]) -> str:
    rates = "; ".join(f"{short(name)} {figure(100 * exact[f'fires_{name}'], decimals=2)}" for name in GAME_EVENTS)
    return (
        f"First-player score {exact['first_player_score']:.{EXACT_SCORE_DIGITS}f} (exact; its games give "
        f"{plain(outcome, 'first_player', 3)}); South wins {figure(100 * exact['south_win'], decimals=2)}%, draws "
        f"{figure(100 * exact['draw'], decimals=2)}% (exact). Mean length {exact['mean_plies']:.2f} plies (exact). "
        f"Games in which each rule fires (%, exact): {rates}."
    )


def advantage_section(data: ReportData) -> Section:
    # North's wins are the rest of each pairing's games: left out here, so that the table keeps
    # its exact columns within a laptop's width (tables/outcomes.csv has them)
    rows = [
        [*pairing_cells(row, data), *put_beside(_without_north(_outcome_cells(row)), exact_outcome_cells(data, row), data)]
        for row in data.outcomes.iter_rows(named=True)
    ]
    cells = ["games", "South wins (%)", "draws (%)", "North wins (%)", "first-player score", "p (score = 1/2)", "p (Holm)"]
    exact = [None, "South wins, exact (%)", "draws, exact (%)", "first-player score, exact", None, None]
    text = (
        "The first player's score per ordered pairing (South's strategy first), with the exact sign test against one "
        "half and its Holm adjustment over every pairing; North wins the rest of the games (tables/outcomes.csv gives "
        "that share too, with its interval). Between different strategies the score mixes the seat with their "
        "strengths: the seat effect is read from both orders together (Who gains from moving first). No score pooled "
        "over every pairing is given: it would weigh each pairing by the games the design gave it, and mean nothing."
    )
    text += exact_note(data)
    return Section(
        "Outcomes of every pairing",
        [text],
        [
            Table(
                "Outcomes per pairing", [*pairing_header(data), *put_beside(_without_north(cells), exact, data)], rows, "outcomes"
            ),
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
        share_cell(row, "south"),
        share_cell(row, "draw"),
        share_cell(row, "north"),
        plain(row, "first_player", 3),
        p_value(row["first_player_p"]),
        p_value(row.get("first_player_p_holm")),
    ]


def solved_words(data: ReportData, rules: str) -> list[str]:
    if data.openings is None or rules not in data.openings["rules"].to_list():
        return []
    openings = data.openings.filter(pl.col("rules") == rules)
    value = int(openings["value"].max())  # type: ignore[arg-type]
    total = total_stones(rules)
    winner = "South, who moves first," if value > 0 else "North, who moves second,"
    result = (
        "a draw"
        if value == 0
        else f"{winner} wins by {abs(value)} stones ({(total + abs(value)) // 2} to {(total - abs(value)) // 2})"
    )
    best = openings.filter("best")["pit"].to_list()
    moves = "; ".join(f"pit {row['pit']} {stones_words(row['value'])}" for row in openings.iter_rows(named=True))
    only = (
        f"South's only best first move is pit {best[0]}"
        if len(best) == 1
        else f"South's best first moves are pits {listed(best)}"
    )
    return [
        f"**The game is solved.** With perfect play on both sides, {result}. {only}; "
        f"the value of each first move for South, in stones of final margin: {moves}."
    ]


def first_player_words(data: ReportData, rules: str) -> list[str]:
    scores = []
    for name in data.strategies(rules):
        value = _self_play_score(data, rules, name)
        if value is not None:
            scores.append((f"{name} {value[0]}", value[1]))
    text = []
    if scores:
        text.append(
            f"**{_seat_verdict(data, rules)}** Between two copies of the same strategy, South's score (a win 1, a draw "
            f"one half) is: {exact_tagged(scores)}. A fair seat would give 0.5."
        )
    seats = data.seat_effect.filter(pl.col("rules") == rules)
    pairs, worse, better = significant_seats(seats)
    if pairs:
        text.append(
            f"Over both seat orders of each of the {pairs} pairs of different strategies, which cancels their "
            f"strengths, moving first significantly lowers the score in {worse} and raises it in {better} (Holm-adjusted "
            f"p < 0.05){_undetected(seats)}."
        )
    return text


def _undetected(seats: pl.DataFrame) -> str:
    """The rest of the pairs in words: those whose games could show a seat effect but do not, and
    those whose games cannot (one strategy wins every game from either seat, or all are drawn)."""
    swept, named = swept_words(seats)
    silent = unmeasured_seats(seats)
    parts = [f"in {silent} the games detect none"] if silent else []
    if swept:
        parts.append(f"in {swept} strength decides every game, so the seat cannot show at all ({named})")
    return "; " + " and ".join(parts) if parts else ""


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
    fair = f"exactly fair for {listed(found['fair'])} (an exact score of 1/2)" if found["fair"] else ""
    unclear = f"for {listed(found['unclear'])} the games show no clear seat effect" if found["unclear"] else ""
    if not found["worse"] and not found["better"]:
        if fair and not unclear:
            return f"Moving first is {fair}."
        return "Moving first is neither a clear advantage nor a clear disadvantage" + (f"; it is {fair}." if fair else ".")
    unanimous = not (found["fair"] or found["unclear"]) and not (found["worse"] and found["better"]) and self_play.height > 1
    signed = [
        f"{words} for {'every strategy' if unanimous else listed(found[kind])}"
        for kind, words in (("worse", "a disadvantage"), ("better", "an advantage"))
        if found[kind]
    ]
    rest = "".join(f"; {part}" for part in (f"it is {fair}" if fair else "", unclear) if part)
    return f"Moving first is {' but '.join(signed)}{rest}."


def _self_play_score(data: ReportData, rules: str, name: str) -> tuple[str, bool] | None:
    """A strategy's self-play first-player score in words, and whether it is exact: exact when
    known, else sampled with its interval."""
    keys = {"rules": rules, "south": name, "north": name}
    exact = exact_row(data, keys)
    if exact is not None:
        return f"{exact['first_player_score']:.3f}", True
    found = data.outcomes.filter(*(pl.col(key) == value for key, value in keys.items()))
    return None if not found.height else (plain(found.row(0, named=True), "first_player", 3), False)


def first_player_section(data: ReportData, exact_pending: str | None = None) -> Section:
    """Who gains from moving first: the seat effect of every pair of strategies (both seat
    orders pooled, so that strength cancels) and self-play."""
    table = data.seat_effect
    rows = [
        [
            *rules_cells(row, data),
            row["strategy_a"] if row["strategy_a"] == row["strategy_b"] else f"{row['strategy_a']} and {row['strategy_b']}",
            f"{row['games']:,}",
            f"{row['first_player_wins']:,} / {row['draws']:,} / {row['second_player_wins']:,}",
            *put_beside(
                [interval(row["seat_effect"], row["seat_effect_low"], row["seat_effect_high"], "+.3f")],
                ["n/a" if row["seat_effect_exact"] is None else f"{row['seat_effect_exact']:+.6f}"],
                data,
            ),
            p_value(row["seat_effect_p"]),
            p_value(row["seat_effect_p_holm"]),
        ]
        for row in table.iter_rows(named=True)
    ]
    header = [*rules_header(data), "strategies", "games", "first player wins / draws / loses"]
    header += [*put_beside(["seat effect"], ["seat effect, exact"], data), "p", "p (Holm)"]
    pairs, worse, better = significant_seats(table)
    text = [
        "A game between two different strategies mixes two things: which seat moves first and which strategy is "
        "stronger. Played both ways round, a pair of strategies moves first equally often, so pooling the two seat "
        "orders cancels their strengths and leaves the effect of the seat: the **seat effect** is the pooled first "
        "player's score minus 1/2 (a win counts 1, a draw 1/2), negative when moving first is a disadvantage. A "
        "strategy's self-play is a pair of its own.",
        f"**Of {plural(pairs, 'pair')} of different strategies, moving first is a significant disadvantage in "
        f"{worse} and a significant advantage in {better}** (Holm-adjusted p < 0.05 over every pair"
        f"{' and rule set' if data.several_rules else ''}){_undetected(table)}.",
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
    """What the seat-effect figure's crosses are, if it has any (pipeline.study.report.figures)."""
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
    pairs = listed([f"{row['strategy_a']} and {row['strategy_b']}" for row in unequal.iter_rows(named=True)])
    return (
        f"The two seat orders of {pairs} played different numbers of games: pooled, the larger would weigh more and let "
        "strength back in, so their seat effect is the mean of the two orders' scores less 1/2, with a normal interval "
        "and z test. "
    )
