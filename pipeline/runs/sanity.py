"""The arithmetic every row read back must keep before it is used.

A seal (engine.store.integrity) or a manifest's checksum catches a file damaged or changed since it was
written, not one written, or sealed again, with figures that cannot be: 105 games of 100, a chance
of 1.2, a margin of 50 stones in a game of 42. Each reader of a kept row (a cached exact outcome or
exploitability, a search ladder pairing, an atlas row, a study's or ladder's exact outcomes) calls
the check of its kind here, and a row that fails is treated as a damaged one: a cache computes it
again, a published file is refused in one line. The checks hold for every row the code writes:
counts sum to the games, chances lie in [0, 1] and sum to 1 (to TOLERANCE), margins, values and
stones lie within the rule set's stones, lengths within its ply cap.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import polars as pl

import engine
from engine.solver import decided_by

TOLERANCE = 1e-9  # float sums of exact chances stay far below this (engine.exact.outcome: 1e-12)
SELF_PLAY_SUM = ("south_win", "draw", "north_win", "unresolved")  # an exact outcome's parts of the whole
LEGAL_MOVES = 3  # a side's pits: no position has more legal moves


class InsaneRowError(ValueError):
    """A row whose figures break its own arithmetic; the message says which figure and how."""


def check_search_row(row: Mapping[str, Any], rules: engine.Rules) -> None:
    """A search ladder pairing's row (pipeline.search_ladder.run.play_pairing)."""
    games = _whole(row, "games", low=1)
    counts = [_whole(row, name) for name in ("south_wins", "draws", "north_wins")]
    if sum(counts) != games:
        raise InsaneRowError(f"south_wins + draws + north_wins is {sum(counts)}, not its {games} games")
    if row["stopped"] not in ("precision", "budget"):
        raise InsaneRowError(f"stopped is {row['stopped']!r}, neither 'precision' nor 'budget'")
    score = (counts[0] + counts[1] / 2) / games
    if not math.isclose(_number(row, "first_player_score"), score, abs_tol=TOLERANCE):
        raise InsaneRowError(f"first_player_score is {row['first_player_score']!r}, not its counts' {score!r}")
    _ordered(row, ("first_player_low", "first_player_score", "first_player_high"), 0.0, 1.0)
    _whole(row, "playouts")
    _between(row, ("feeding_forced", "grand_slam_blocked"), 0.0, 1.0)
    _between(row, ("mean_plies",), 0.0, rules.ply_cap)
    searched = _whole(row, "searched_moves")
    _whole(row, "perfect_moves", high=searched)
    _between(row, ("loss_stones",), 0.0, 2 * rules.total_stones * searched)


def check_exact_outcome(outcome: engine.ExactOutcome) -> None:
    """An exact outcome (engine.exact_outcome): its chances, margins, lengths and events."""
    figures = {name: getattr(outcome, name) for name in SELF_PLAY_SUM}
    _whole_chance(figures, SELF_PLAY_SUM)
    stones = outcome.rules.total_stones
    if any(not -stones <= margin <= stones for margin in outcome.margin):
        raise InsaneRowError(f"a margin lies beyond the {stones} stones of {outcome.rules.name}")
    _chances(outcome.margin.values(), "a margin's chance")
    parts = {"wins": outcome.south_win, "draws": outcome.draw, "losses": outcome.north_win}
    for word, (sign, chance) in zip(parts, ((1, outcome.south_win), (0, outcome.draw), (-1, outcome.north_win)), strict=True):
        mass = sum(p for margin, p in outcome.margin.items() if (margin > 0) - (margin < 0) == sign)
        if not math.isclose(mass, chance, abs_tol=TOLERANCE):
            raise InsaneRowError(f"the margins give South's {word} a chance of {mass!r}, not {chance!r}")
    if len(outcome.plies) > outcome.rules.ply_cap + 1:
        raise InsaneRowError(f"its lengths run past the {outcome.rules.ply_cap}-ply cap")
    _chances(outcome.plies, "a length's chance")
    if not math.isclose(float(sum(outcome.plies)), 1 - outcome.unresolved, abs_tol=TOLERANCE):
        raise InsaneRowError(f"its lengths' chances sum to {float(sum(outcome.plies))!r}, not 1 less the unresolved")
    _events(outcome.event_fires, outcome.event_mean)


def check_exploitability(found: engine.Exploitability) -> None:
    """What a best response wins against a strategy in each seat: within the rule set's stones."""
    stones = found.rules.total_stones
    _between({"as_south": found.as_south, "as_north": found.as_north}, ("as_south", "as_north"), -stones, stones)


def check_atlas_row(row: Mapping[str, Any], rules: engine.Rules, positions: int, self_play: Iterable[str]) -> None:
    """One rule set's atlas row (pipeline.atlas.analyse): ``positions`` is its index's size and
    ``self_play`` the prefixes of its self-play figures."""
    if _whole(row, "positions") != positions:
        raise InsaneRowError(f"positions is {row['positions']}, not the {positions} boards of its index")
    _ordered(row, ("terminal_positions", "reachable_positions", "positions"), 0, positions)
    _between(row, ("mean_branching",), 0.0, LEGAL_MOVES)
    stones = rules.total_stones
    start = _whole(row, "start_value", low=-stones, high=stones)
    values = {pit: row[f"first_move_{pit}_value"] for pit in range(LEGAL_MOVES)}
    legal = {pit: _whole(row, f"first_move_{pit}_value", low=-stones, high=stones) for pit, v in values.items() if v is not None}
    if legal and (
        max(legal.values()) != start or sorted(row["best_first_moves"]) != sorted(p for p, v in legal.items() if v == start)
    ):
        raise InsaneRowError(f"start_value {start} and best_first_moves are not the best of its first moves' values")
    _whole(row, "never_settled", high=positions)
    _ordered(row, ("perfect_mean_plies", "perfect_max_plies"), 0, rules.ply_cap)
    _between(row, ("perfect_cap_reached",), 0.0, 1.0)
    _between(row, ("greedy_exploitability_as_south", "greedy_exploitability_as_north"), -stones, stones)
    for prefix in self_play:
        parts = tuple(f"{prefix}_{name}" for name in SELF_PLAY_SUM)
        _whole_chance(row, parts)
        score = _number(row, f"{prefix}_south_win") + _number(row, f"{prefix}_draw") / 2
        if not math.isclose(_number(row, f"{prefix}_first_player_score"), score, abs_tol=TOLERANCE):
            raise InsaneRowError(f"{prefix}_first_player_score is not {prefix}_south_win + {prefix}_draw / 2")
        _between(row, (f"{prefix}_mean_plies",), 0.0, rules.ply_cap)
        _between(row, (f"{prefix}_cap_reached",), 0.0, 1.0)
        fires = {
            name.removesuffix("_fires"): row[name] for name in row if name.startswith(prefix + "_") and name.endswith("_fires")
        }
        means = {
            name.removesuffix("_mean"): row[name] for name in row if name.startswith(prefix + "_") and name.endswith("_mean")
        }
        _events(fires, means)
    _verdict(row, rules, start)


VERDICT_FIELDS = ("remoteness", "longest_line", "decided_by", "stable_from_cap", "value_cap_one_less", "value_cap_one_more")


def _verdict(row: Mapping[str, Any], rules: engine.Rules, start: int) -> None:
    """An atlas row's verdict (pipeline.atlas.analyse.verdict_figures), all null in a row kept
    from before it: play decides the value when the side ahead can end play before the cap (at a
    value of 0, when every value-keeping game ends), and a hurried game is no longer than the longest."""
    if row.get("decided_by") is None:
        if any(row.get(name) is not None for name in (*VERDICT_FIELDS, "game_fingerprint")):
            raise InsaneRowError("decided_by is null but not the rest of its verdict")
        return
    hurry, longest = (row[name] for name in ("remoteness", "longest_line"))
    for name in ("remoteness", "longest_line"):
        if row[name] is not None:
            _whole(row, name, high=rules.ply_cap)
    if hurry is not None and longest is not None and hurry > longest:
        raise InsaneRowError(f"remoteness {hurry} exceeds longest_line {longest}")
    decided = decided_by(start, hurry, longest)
    if row["decided_by"] != decided:
        raise InsaneRowError(f"decided_by is {row['decided_by']!r}, where its remoteness and longest line say {decided!r}")
    _whole(row, "stable_from_cap", high=rules.ply_cap)
    stones = rules.total_stones
    for name in ("value_cap_one_less", "value_cap_one_more"):
        _whole(row, name, low=-stones, high=stones)
    fingerprint = row.get("game_fingerprint")
    if not isinstance(fingerprint, str) or len(fingerprint) != 64 or set(fingerprint) - set("0123456789abcdef"):
        raise InsaneRowError(f"game_fingerprint {fingerprint!r} is not a SHA-256 in hex")


# ---------------------------------------------------------------------------------------------


def _number(row: Mapping[str, Any], name: str) -> float:
    value = row[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InsaneRowError(f"{name} is {value!r}, not a finite number")
    return float(value)


def _whole(row: Mapping[str, Any], name: str, low: int = 0, high: float = math.inf) -> int:
    value = row[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        bound = "" if high == math.inf else f" to {high:g}"
        raise InsaneRowError(f"{name} is {value!r}, not a whole number from {low}{bound}")
    return value


def _between(row: Mapping[str, Any], names: Iterable[str], low: float, high: float) -> None:
    for name in names:
        if not low - TOLERANCE <= _number(row, name) <= high + TOLERANCE:
            raise InsaneRowError(f"{name} is {row[name]!r}, outside [{low:g}, {high:g}]")


def _ordered(row: Mapping[str, Any], names: tuple[str, ...], low: float, high: float) -> None:
    """Each of ``names`` within [low, high], and in the order given."""
    _between(row, names, low, high)
    values = [_number(row, name) for name in names]
    if any(a > b + TOLERANCE for a, b in itertools.pairwise(values)):
        raise InsaneRowError(f"{' <= '.join(names)} does not hold: {values}")


def _chances(values: Iterable[Any], what: str) -> None:
    for value in values:
        if not -TOLERANCE <= float(value) <= 1 + TOLERANCE:
            raise InsaneRowError(f"{what} is {float(value)!r}, outside [0, 1]")


def _whole_chance(row: Mapping[str, Any], names: tuple[str, ...]) -> None:
    """Chances that together make the whole: each in [0, 1], summing to 1."""
    _between(row, names, 0.0, 1.0)
    total = sum(_number(row, name) for name in names)
    if not math.isclose(total, 1.0, abs_tol=TOLERANCE):
        raise InsaneRowError(f"{' + '.join(names)} is {total!r}, not 1")


def _events(fires: Mapping[str, Any], means: Mapping[str, Any]) -> None:
    """A chance of firing in [0, 1]; an expected count at least that chance (an event that fires
    counts at least 1)."""
    _chances(fires.values(), "a rule event's chance of firing")
    for name, mean in means.items():
        if float(mean) < float(fires.get(name, 0.0)) - TOLERANCE:
            raise InsaneRowError(f"the expected count of {name} is {float(mean)!r}, below its chance of firing")


def check_exact_row(row: Mapping[str, Any]) -> None:
    """A row of an exact.parquet (pipeline.runs.records.exact_table): the outcome it holds, and its
    first player's score and mean length as that outcome gives them."""
    try:
        rules = engine.Rules.from_name(row["rules"])
    except ValueError as error:
        raise InsaneRowError(f"rules is {row['rules']!r}, no rule set's name ({error})") from None
    outcome = engine.ExactOutcome(
        south=row["south"],
        north=row["north"],
        rules=rules,
        south_win=_number(row, "south_win"),
        draw=_number(row, "draw"),
        north_win=_number(row, "north_win"),
        margin={int(item["margin"]): float(item["probability"]) for item in row["margin"]},
        plies=np.asarray(row["plies"], dtype=np.float64),
        event_fires={name: _number(row, f"fires_{name}") for name in engine.EVENTS},
        event_mean={name: _number(row, f"mean_{name}") for name in engine.EVENTS},
        unresolved=_number(row, "unresolved"),
    )
    check_exact_outcome(outcome)
    for name in ("first_player_score", "mean_plies"):
        if not math.isclose(_number(row, name), getattr(outcome, name), rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            raise InsaneRowError(f"{name} is {row[name]!r}, not its outcome's {getattr(outcome, name)!r}")


def game_faults(games: pl.LazyFrame) -> pl.DataFrame:
    """The games (game_id, and the first fault found) whose own arithmetic fails: scores that do
    not sum to the rule set's stones, a winner the scores do not give, a length beyond the ply cap."""
    names = games.select(pl.col("rules").unique()).collect()["rules"].to_list()
    try:
        rule_sets = {name: engine.Rules.from_name(name) for name in names}
    except ValueError as error:
        raise InsaneRowError(f"a game's rules name no rule set ({error})") from None
    stones = _per_rule_set({name: rules.total_stones for name, rules in rule_sets.items()})
    cap = _per_rule_set({name: rules.ply_cap for name, rules in rule_sets.items()})
    south, north = pl.col("score_south").cast(pl.Int64), pl.col("score_north").cast(pl.Int64)
    given = pl.when(south > north).then(pl.lit("south")).when(south < north).then(pl.lit("north")).otherwise(pl.lit("draw"))
    scores, winner, plies = south + north != stones, pl.col("winner") != given, pl.col("plies").cast(pl.Int64) > cap
    fault = (
        pl.when(scores)
        .then(pl.format("score_south + score_north is {}, not the {} stones of {}", south + north, stones, pl.col("rules")))
        .when(winner)
        .then(pl.format("winner is {}, but the scores {}-{} give {}", pl.col("winner"), south, north, given))
        .otherwise(pl.format("plies is {}, beyond the {}-ply cap", pl.col("plies"), cap))
    )
    return games.filter(scores | winner | plies).select("game_id", fault.alias("fault")).collect()


def _per_rule_set(values: dict[str, int]) -> pl.Expr:
    return pl.col("rules").replace_strict(values, return_dtype=pl.Int64)
