"""The fairness search of one rule set, exactly: other starts, the pie rule and komi.

FairKalah (Neller et al., Computers and Games 2022) found Kalah(6,4) a first-player win by 10
and, by a solver search, 254 starts reached by moving one or two seeds where perfect play
draws (323 with empty captures off). Modiar is small enough to do the
same over every start of the kind, and the two classic balancing devices besides:

    start value   South's final total minus North's under perfect play from a start (South
                  to move at ply 0): a lookup in the strong solution (engine.solve), which
                  holds every position of the rule set's stones; the first move's forfeit
                  comes from engine.tables.first_move, as for the rule set's own start
    fair          a start whose value is 0: perfect play draws
    moved         the fewest stones that, moved between pits (either row), turn the rule set's
                  start into this one: the stones above the standard count, summed over pits
    pie rule      after South's first move North may take South's side. A first move worth v
                  to South (its capture minus the value of the position it leaves) is then
                  worth max(-v, v) = |v| to North, so South opens with a move of least |v|:
                  the value under the pie rule is -min |v|. It is never above 0 (the pie rule
                  never favours the first player) and is 0 only if some first move is worth 0
    komi          stones given to the first player at the end. Komi shifts every final margin
                  alike, so it changes no choice of a player who maximises the margin, and
                  South can still force a margin of at least V and North hold it to at most V:
                  with komi k the game is a win, draw or loss as V + k is above, at or below 0.
                  Komi -V draws; -V + 1/2 (or -V - 1/2) decides every game, as half-point
                  komi does in Go

The pie rule and komi follow from the values of the first moves, which the atlas keeps for
every rule set (first_move_<pit>_value; ``balance``); tests/pipeline/analysis/test_fairness.py checks both against
the solver on hand-built positions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from math import comb

import polars as pl

import engine
from engine.game import PIT_LIMIT, PITS, ROW, SOUTH, pack
from engine.solver import PLAY, verdict


@dataclass(frozen=True)
class Balance:
    """The start value of a rule set or a start, with what the pie rule and komi make of it."""

    value: int  # South's final total minus North's under perfect play
    pie_value: int | None  # the value under the pie rule (None: South has no first move)
    komi: int  # the stones to give South (negative: to take) for a draw under perfect play


def balance(value: int, first_move_values: Sequence[int]) -> Balance:
    """The pie rule's value and the drawing komi from a start's value and its first moves' values
    (see the module docstring)."""
    pie = -min(abs(v) for v in first_move_values) if len(first_move_values) else None
    return Balance(value, pie, -value)


def pie_words(balanced: Balance, rules: engine.Rules) -> str:
    """The pie rule's value in words ("pie rule -2"), or why there is none ("no pie rule: South has
    no legal first move (...)")."""
    if balanced.pie_value is not None:
        return f"pie rule {balanced.pie_value}"
    return f"no pie rule: {no_first_move(rules)}"


def no_first_move(rules: engine.Rules) -> str:
    """Why South has no legal first move at the rule set's start, so that the game ends before it
    begins and North has nothing to take: its pits hold too few stones to be played (the one way
    a start of equal pits has no move; the bans of RULES.md only remove moves when others remain)."""
    held, needed = rules.stones_per_pit, rules.min_stones_to_play
    if held < needed:
        return (
            f"South has no legal first move (each pit holds {held} {'stone' if held == 1 else 'stones'} "
            f"and a pit needs {needed} to be played), so the game ends at once"
        )
    return "South has no legal first move, so the game ends at once"


def starts_within(rules: engine.Rules, moved: int) -> list[tuple[int, ...]]:
    """Every start reached from the rule set's by moving 1 to ``moved`` stones between pits: the
    pit counts (pit 0 first) with the rule set's stones, in lexicographic order. Its work is in
    proportion to the starts it lists, however large ``moved``."""
    if moved < 1:
        raise ValueError(f"moved stones are 1 or more, not {moved}")
    return list(_starts((), rules.total_stones, 0, 0, rules.stones_per_pit, moved))


def count_starts(rules: engine.Rules, moved: int) -> int:
    """How many starts ``starts_within(rules, moved)`` lists, counted without listing them."""
    return sum(_starts_moving(rules, stones) for stones in range(1, min(moved, rules.total_stones) + 1))


def most_moved(rules: engine.Rules) -> int:
    """The most stones any start of the rule set has moved: ``starts_within`` finds no start
    beyond it (with at most PIT_LIMIT in a pit, all the stones in one pit moves all but a pit's)."""
    return max(stones for stones in range(1, rules.total_stones + 1) if _starts_moving(rules, stones))


def start_name(counts: Sequence[int]) -> str:
    """A start's pit counts as the tables name it: South's pits 0 1 2, then North's 3 4 5, in the
    order of sowing, "6 8 7 / 6 8 7"."""
    return " ".join(map(str, counts[:ROW])) + " / " + " ".join(map(str, counts[ROW:]))


def stones_moved(counts: Sequence[int], standard: int) -> int:
    """The fewest stones moved between pits to make ``counts`` from ``standard`` in every pit."""
    return sum(max(0, count - standard) for count in counts)


# The columns of start_table before its natural rank, spelt out: inferred from the first rows, a
# column would take the type of starts where South has no first move (all nulls), and the first
# value of another starts' row would not fit it.
START_SCHEMA = {
    "start": pl.String,
    **{f"pit_{pit}": pl.Int64 for pit in range(PITS)},
    "moved": pl.Int64,
    "rows_equal": pl.Boolean,
    "mirrored": pl.Boolean,
    "alike_pits": pl.Int64,
    "value": pl.Int64,
    **{f"first_move_{pit}_value": pl.Int64 for pit in range(ROW)},
    "pie_value": pl.Int64,
    "komi": pl.Int64,
    "remoteness": pl.Int64,
    "longest_line": pl.Int64,
    "decided_by": pl.String,
    "stable_from_cap": pl.Int64,
    "value_cap_one_less": pl.Int64,
    "value_cap_one_more": pl.Int64,
}


def start_table(rules: engine.Rules, solution: engine.Solution, lines: engine.Remoteness, moved: int = 2) -> pl.DataFrame:
    """Every start within ``moved`` stones of the rule set's (``starts_within``), one row each:

    start            the pit counts, "6 8 7 / 6 8 7" (``start_name``)
    pit_0 .. pit_5   the counts
    moved            stones moved (``stones_moved``)
    rows_equal       whether each row keeps its stones (the stones moved within rows)
    mirrored         whether both players see the same row (pit i = pit i + 3)
    value            the start's value; fair = value 0
    first_move_<p>_value   each first move's value to South (null: not legal)
    pie_value, komi  ``balance``
    remoteness       plies to the end of play, the favoured side hurrying (null: the cap stops
                     it; engine.solver.verdict, from ``lines``, the remoteness of ``rules``)
    longest_line     the longest value-optimal game (null: one reaches the cap)
    decided_by       "play" or "cap": what decides the start's verdict
    stable_from_cap  the least cap from which the start's value stays the same up to the rule set's
    value_cap_one_less, value_cap_one_more   the value under a cap one ply shorter, one longer
    natural_rank     the order of the fair starts decided by play by how natural they are: fewest
                     stones moved, then rows that keep their stones, then mirrored rows, then the
                     most pits equal to the pit facing them in play (i and i + 3); null for the
                     unfair starts and those fair only at the cap
    """
    rows = []
    for counts in starts_within(rules, moved):
        board = pack(list(counts))
        values = dict(zip(engine.legal_moves(board, SOUTH, 0, rules), solution.move_values(board, SOUTH, 0), strict=True))
        found = verdict(solution, lines, board)
        value = found.value
        balanced = balance(value, list(values.values()))
        rows.append(
            {
                "start": start_name(counts),
                **{f"pit_{pit}": count for pit, count in enumerate(counts)},
                "moved": stones_moved(counts, rules.stones_per_pit),
                "rows_equal": sum(counts[:ROW]) == sum(counts[ROW:]),
                "mirrored": counts[:ROW] == counts[ROW:],
                "alike_pits": sum(counts[pit] == counts[pit + ROW] for pit in range(ROW)),
                "value": value,
                **{f"first_move_{pit}_value": values.get(pit) for pit in range(ROW)},
                "pie_value": balanced.pie_value,
                "komi": balanced.komi,
                **found.columns(),
            }
        )
    frame = pl.DataFrame(rows, schema=START_SCHEMA)
    fair = frame.filter((pl.col("value") == 0) & (pl.col("decided_by") == PLAY)).sort(
        "moved", ~pl.col("rows_equal"), ~pl.col("mirrored"), -pl.col("alike_pits"), *(f"pit_{pit}" for pit in range(PITS))
    )
    rank = {start: place for place, start in enumerate(fair["start"].to_list(), start=1)}
    ranks = pl.Series("natural_rank", [rank.get(start) for start in frame["start"].to_list()], dtype=pl.Int64)
    return frame.with_columns(ranks).drop("alike_pits")


# ---------------------------------------------------------------------------------------------
# Exact play from the fair starts

# What the fairness search plays exactly from a start (engine.exact_outcome, both seats alike):
# random self-play, whose first-player score and rule events say how the game feels to a
# beginner, and perfect self-play (ties at random, as engine's perfect), whose mean length is
# the game's length between experts.
EXACT_SPECS = ("random", "perfect")
# The rule events of random self-play the search reports: the chance each fires in a game.
EXACT_EVENTS = ("feeding_forced", "grand_slam_blocked")
# The figures of a start's row from its exact outcomes, and the one each is compared on
# against the rule set's own start for the Pareto front (closer is better).
EXACT_COLUMNS = (
    "random_first_player_score",
    "random_mean_plies",
    *(f"random_{name}_fires" for name in EXACT_EVENTS),
    "perfect_mean_plies",
)
PARETO_COLUMNS = ("perfect_mean_plies", *(f"random_{name}_fires" for name in EXACT_EVENTS))


def exact_row(outcomes: dict[str, engine.ExactOutcome]) -> dict[str, float]:
    """A start's figures (EXACT_COLUMNS) from its exact outcomes, by spec (EXACT_SPECS)."""
    random, perfect = outcomes["random"], outcomes["perfect"]
    row = {"random_first_player_score": random.first_player_score, "random_mean_plies": random.mean_plies}
    row |= {f"random_{name}_fires": random.event_fires[name] for name in EXACT_EVENTS}
    return row | {"perfect_mean_plies": perfect.mean_plies}


def pareto_front(frame: pl.DataFrame, reference: dict[str, float], columns: Sequence[str] = PARETO_COLUMNS) -> pl.Series:
    """Whether each row is on the Pareto front of closeness to ``reference``: no other row is at
    least as close on every column of ``columns`` and closer on one (rows with a null are off)."""
    distance = [(frame[column] - reference[column]).abs().to_list() for column in columns]
    rows = list(zip(*distance, strict=True))
    on = []
    for row in rows:
        if any(value is None for value in row):
            on.append(False)
            continue
        dominated = any(
            other is not row
            and all(value is not None for value in other)
            and all(o <= r for o, r in zip(other, row, strict=True))
            and any(o < r for o, r in zip(other, row, strict=True))
            for other in rows
        )
        on.append(not dominated)
    return pl.Series("pareto", on, dtype=pl.Boolean)


# ---------------------------------------------------------------------------------------------
# The atlas's rule sets

# What a fair rule set is compared on against the reference rule set for the atlas's Pareto
# front: the fairness search's figures and the positions whose value never settles.
RULE_SET_PARETO_COLUMNS = (*PARETO_COLUMNS, "never_settled")


def balance_table(frame: pl.DataFrame) -> pl.DataFrame:
    """Every rule set of an atlas's rows with its start value, first moves' values, the value
    under the pie rule and the drawing komi (``balance``), from the columns the atlas keeps."""
    rows = []
    for row in frame.iter_rows(named=True):
        values = [row[f"first_move_{pit}_value"] for pit in range(ROW) if row[f"first_move_{pit}_value"] is not None]
        balanced = balance(row["start_value"], values)
        rows.append({"rules": row["rules"], "pie_value": balanced.pie_value, "komi": balanced.komi})
    found = pl.DataFrame(rows, schema={"rules": pl.String, "pie_value": pl.Int64, "komi": pl.Int64})
    columns = ["rules", "start_value", *(f"first_move_{pit}_value" for pit in range(ROW))]
    return frame.select(columns).with_columns(found.drop("rules"))


def fair_rule_set_front(frame: pl.DataFrame, reference: str | None) -> pl.DataFrame:
    """The rule sets of an atlas's rows fair by play (start value 0 and every value-keeping game
    ends: decided_by "play"; all those of value 0 in rows without verdicts) with their
    RULE_SET_PARETO_COLUMNS and whether each is on the Pareto front of closeness to the
    ``reference`` rule set (all off without one). A rule set fair only at the cap, or whose
    verdict is not known yet, is left out: its draw is the cap's scoring, not play's."""
    fair = frame.filter(pl.col("start_value") == 0)
    if "decided_by" in frame.columns and frame["decided_by"].is_not_null().any():
        fair = fair.filter(pl.col("decided_by") == PLAY)
    fair = fair.select("rules", *RULE_SET_PARETO_COLUMNS)
    if reference is None or fair.height == 0:
        return fair.with_columns(pl.lit(False).alias("pareto"))
    row = frame.filter(pl.col("rules") == reference).row(0, named=True)
    reference_row = {column: float(row[column]) for column in RULE_SET_PARETO_COLUMNS}
    return fair.with_columns(pareto_front(fair, reference_row, RULE_SET_PARETO_COLUMNS))


# ---------------------------------------------------------------------------------------------
# The starts, walked and counted


def _starts(counts: tuple[int, ...], left: int, gained: int, lost: int, standard: int, moved: int) -> Iterator[tuple[int, ...]]:
    """The starts that begin with the pit counts ``counts``, which hold ``gained`` stones above
    ``standard`` and ``lost`` below it, with ``left`` stones for the pits after them. Each count
    of the next pit keeps both within ``moved`` and leaves the later pits room for what is left,
    so every count tried begins a start: the walk visits no board it does not list."""
    later = PITS - len(counts) - 1  # the pits after the next one
    if later < 0:
        if gained:  # not the rule set's own start
            yield counts
        return
    low = max(0, standard - (moved - lost), left - later * PIT_LIMIT)
    high = min(PIT_LIMIT, standard + (moved - gained), left)
    for count in range(low, high + 1):
        above, below = max(0, count - standard), max(0, standard - count)
        yield from _starts((*counts, count), left - count, gained + above, lost + below, standard, moved)


def _starts_moving(rules: engine.Rules, moved: int) -> int:
    """How many starts have exactly ``moved`` stones moved: some pits (1 to PITS - 1 of them)
    gain the ``moved`` stones, each 1 to PIT_LIMIT - standard of them, and the others lose as
    many, each 0 to standard."""
    standard = rules.stones_per_pit
    return sum(
        comb(PITS, gaining) * _ways(gaining, moved - gaining, PIT_LIMIT - standard - 1) * _ways(PITS - gaining, moved, standard)
        for gaining in range(1, PITS)
    )


def _ways(parts: int, total: int, most: int) -> int:
    """The ways to write ``total`` as a sum of ``parts`` whole numbers from 0 to ``most``, in
    order: stars and bars, less those with a part above ``most`` (inclusion-exclusion)."""
    if parts == 0:
        return int(total == 0)
    return sum(
        (-1) ** over * comb(parts, over) * _choose(total - over * (most + 1) + parts - 1, parts - 1) for over in range(parts + 1)
    )


def _choose(n: int, k: int) -> int:
    return comb(n, k) if n >= k >= 0 else 0
