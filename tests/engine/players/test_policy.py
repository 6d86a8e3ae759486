"""Policy tables (engine.players.policy) against the scalar strategies they tabulate, and against solved facts.

A table strategy's table must choose, in every position, as its scalar version does: the same
set of moves for the strategies that are uniform among their best moves (the best found here
from the scalar scores: ``engine.players.search._heuristic_score``, ``alphabeta_scores``,
``Solution.best_moves``), and the exact probabilities of ``perfect(epsilon=e)`` and
``perfect(temperature=t)``, worked out here from ``Solution.move_values``. Positions come two
ways: every position of thousands of seeded games, and positions drawn uniformly from the
tables (reachable or not) at a uniform ply before the cap.

Games are played by ``play_batch`` (fast) and replayed through the position tables; that the
batch plays the games of ``play_game`` is checked below for every pairing, and that the replay
meets the positions ``play_game`` shows its ``on_move`` too.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import shutil
from fractions import Fraction

import numpy as np
import pytest

import engine
from engine import Position, Rng, Rules, UnknownStrategyError, make_strategy, play_batch, play_game
from engine.game.board import rotate
from engine.game.options import positions
from engine.game.rng import game_seeds
from engine.play.columns import GAME_COLUMNS, GameBatch
from engine.players import search as scalar_search
from engine.players.choice import NO_MOVE, SCALE, pack_keys, pit_of
from engine.players.near_cap import NearCap
from engine.players.policy import NotATableStrategyError, PolicyTable, is_table_strategy, policy_path, policy_table
from engine.players.search import alphabeta_scores, solution
from engine.solver import sweep_values
from engine.tables.first_move import first_moves
from engine.tables.positions import PositionTables, load_tables, table_rules

RULE_SETS = [
    Rules(),
    Rules(stones_per_pit=4, feeding=False),
    Rules(stones_per_pit=5, grand_slam="allowed", ply_cap=60),  # the small cap: many plies near it
]
# Small rule sets at the edges of the plies left: a cap of 1 (the first move is the last), 2 and 5
# (every ply is near the cap), and a first move that keeps its captures.
EDGE_RULES = [
    Rules(stones_per_pit=3, ply_cap=1),
    Rules(stones_per_pit=3, ply_cap=2),
    Rules(stones_per_pit=3, ply_cap=5),
    Rules(stones_per_pit=3, first_move_forfeit=False, ply_cap=20),
]
SMALL_CAP = Rules(stones_per_pit=4, feeding=False, ply_cap=12)  # a tenth of the games below reach the cap
ARGMAX_SPECS = ["random", "greedy", "heuristic", "alphabeta(depth=1)", "alphabeta(depth=2)", "alphabeta(depth=4)", "perfect"]
GRADED_SPECS = ["perfect(epsilon=0.1)", "perfect(temperature=1.0)"]
SPECS = ARGMAX_SPECS + GRADED_SPECS
PAIRED_SPECS = [
    "random",
    "greedy",
    "heuristic",
    "alphabeta(depth=2)",
    "perfect",
    "perfect(epsilon=0.25)",
    "perfect(temperature=1.0)",
]

# Games per pairing (the strategy as South and as North against random, and against itself):
# the quick run's, and the slow run's (make test-slow).
GAMES = [1_000, pytest.param(10_000, marks=pytest.mark.slow)]
# Uniform positions a (rule set, strategy): the quick run's sample, and the slow run's.
UNIFORM = [5_000, pytest.param(100_000, marks=pytest.mark.slow)]
# The scalar alpha-beta at depth 4 takes ~100 us a position on the default rules: it is checked
# on 20,000 uniform positions and 20,000 of its game positions (drawn from all of them) a rule set.
DEEP_SEARCH_SAMPLE = 20_000
DRAWN = 3_000  # positions a test also plays with the scalar strategy's own choose() and one draw
TEMPERATURE_TOLERANCE = 2.0**-30


def spec_id(spec: str) -> str:
    return spec.replace("(", "-").replace(")", "").replace("=", "")


@functools.cache
def variant_tables(rules: Rules) -> PositionTables:
    return load_tables(table_rules(rules), progress=False)


@functools.cache
def capped_tables(rules: Rules) -> PositionTables:
    """The tables of ``rules`` carrying the rules' own cap (tables do not depend on it): play_batch
    takes its cap from its tables, not from its rules (test_play_batch_stops_at_the_cap_of_its_rules
    fails on that), so the games here are played with these."""
    return dataclasses.replace(variant_tables(rules), rules=rules)


@pytest.fixture
def tables_of(default_tables):
    def tables(rules: Rules) -> PositionTables:
        return default_tables if table_rules(rules) == Rules() else variant_tables(rules)

    return tables


# --- the scalar side --------------------------------------------------------------------------


def scalar_position(rules: Rules, view: int, ply: int) -> Position:
    """The position of a board seen by its mover, with the mover of a game at this ply."""
    mover = ply % 2
    return engine.position(view if mover == 0 else rotate(view), mover, ply, rules)


def scalar_best(spec: str, here: Position) -> set[int]:
    """The pits (mover's view) the scalar strategy chooses among: the options whose score ties the best."""
    options, rules = here.options, here.rules
    if not options:
        return set()
    if spec == "perfect":
        return {pit - 3 * here.mover for pit in solution(rules).best_moves(here.board, here.mover, here.ply)}
    if spec == "random":
        scores: list = [0] * len(options)
    elif spec == "greedy":
        scores = [option.captured for option in options]
    elif spec == "heuristic":
        last = here.ply + 1 >= rules.ply_cap
        scores = [scalar_search._heuristic_score(option, positions(rules), last) for option in options]
    else:
        scores = alphabeta_scores(here, make_strategy(spec).depth)
    best = max(scores)
    return {option.pit for option, score in zip(options, scores, strict=True) if score == best}


def scalar_probabilities(spec: str, here: Position) -> list:
    """Each pit's probability (mover's view) under perfect(epsilon=e) (exact Fractions, e the
    float's binary value) or perfect(temperature=t) (floats), from the solution's move values."""
    strategy = make_strategy(spec)
    chance: list = [Fraction(0)] * 3
    values = solution(here.rules).move_values(here.board, here.mover, here.ply)
    if not values:
        return chance
    pits = [option.pit for option in here.options]
    best = max(values)
    if strategy.epsilon is not None:
        epsilon, n, b = Fraction(strategy.epsilon), len(values), values.count(best)
        for pit, value in zip(pits, values, strict=True):
            chance[pit] = epsilon / n + ((1 - epsilon) / b if value == best else 0)
        return chance
    weights = [math.exp((value - best) / strategy.temperature) for value in values]
    for pit, weight in zip(pits, weights, strict=True):
        chance[pit] = weight / sum(weights)
    return chance


def expected_epsilon_widths(chance: list[Fraction]) -> tuple[int, int, int]:
    """engine.players.choice's cuts of exact probabilities: ceil(2**32 * P(pits below)), as widths."""
    if not any(chance):
        return 0, 0, 0
    c1, c2 = math.ceil(chance[0] * SCALE), math.ceil((chance[0] + chance[1]) * SCALE)
    return c1, c2 - c1, SCALE - c2


# --- the table side ---------------------------------------------------------------------------


def table_classes(table: PolicyTable, rules: Rules, indices: np.ndarray, plies: np.ndarray) -> np.ndarray:
    """The class of each (position, ply): ``first`` at ply 0, else classes_at with the plies left."""
    classes = np.empty(len(indices), dtype=np.int64)
    later = plies > 0
    classes[~later] = table.first
    plies_left = rules.ply_cap - plies
    for k in np.unique(plies_left[later]).tolist():
        rows = np.flatnonzero(later & (plies_left == k))
        classes[rows] = table.classes_at(indices[rows], k)
    return classes


def assert_table_is_scalar(spec: str, rules: Rules, tables: PositionTables, indices: np.ndarray, plies: np.ndarray) -> None:
    """The table's chances in each (position, ply) are the scalar strategy's, and for the first
    DRAWN positions with a move, one draw gives the pit the scalar ``choose`` gives."""
    table = policy_table(spec, rules, tables=tables)
    classes = table_classes(table, rules, indices, plies)
    chances = table.chances(classes).tolist()
    views = tables.index.codes(indices).tolist()
    strategy = make_strategy(spec)
    mismatches = []
    drawn_rows, drawn_pits, draws = [], [], []
    for row, (view, ply) in enumerate(zip(views, plies.tolist(), strict=True)):
        here = scalar_position(rules, view, ply)  # ply 0: the start, whose index the games begin at
        got = chances[row]
        if spec in GRADED_SPECS:
            expected = scalar_probabilities(spec, here)
            if strategy.epsilon is not None:
                agrees = tuple(got) == expected_epsilon_widths(expected)
            else:
                legal = {option.pit for option in here.options}
                agrees = all(
                    abs(width / SCALE - chance) <= TEMPERATURE_TOLERANCE and (pit in legal or width == 0)
                    for pit, (width, chance) in enumerate(zip(got, expected, strict=True))
                )
        else:
            expected = scalar_best(spec, here)
            agrees = {pit for pit in range(3) if got[pit]} == expected and (sum(got) == SCALE) == bool(expected)
        if not agrees:
            mismatches.append(f"board {engine.unpack(here.board)} mover {here.mover} ply {ply}: table {got}, scalar {expected}")
            if len(mismatches) == 5:
                break
        if here.options and len(drawn_rows) < DRAWN:
            drawn_rows.append(row)
            draws.append(Rng.for_game(row).next_u32())
            drawn_pits.append(strategy.choose(here, Rng.for_game(row)) - 3 * here.mover)
    assert not mismatches, f"{spec} under {rules.name}:\n" + "\n".join(mismatches)
    picked = table.pits(classes[drawn_rows], np.array(draws, dtype=np.int64)).tolist()
    assert picked == drawn_pits, f"{spec} under {rules.name}: the table's pit for a draw is not the scalar choose()'s"


# --- the positions ----------------------------------------------------------------------------


def uniform_positions(rules: Rules, tables: PositionTables, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform table indices (any board of at most the rule set's stones) at a uniform ply in 1 .. cap - 1."""
    if rules.ply_cap < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    return rng.integers(0, tables.size, count), rng.integers(1, rules.ply_cap, count)


def replayed_positions(batch: GameBatch, rules: Rules, tables: PositionTables) -> tuple[np.ndarray, np.ndarray]:
    """Every (position, ply) before a move or at the end of the batch's games (ply < cap), the
    position a table index of the board seen by its mover: the games replayed through the tables."""
    plies = batch.plies.astype(np.int64)
    moves = np.full((len(batch), max(1, int(plies.max()))), -1, dtype=np.int64)
    rows = np.repeat(np.arange(len(batch)), plies)
    moves[rows, np.arange(len(batch.moves)) - batch.move_offsets[rows]] = batch.moves
    first_child, _ = first_moves(rules).by_pit()
    start = tables.index.rank(engine.start_board(rules))
    found_indices, found_plies = [np.array([start])], [np.array([0])]
    position = np.full(len(batch), start, dtype=np.int64)
    for ply in range(int(plies.max())):
        playing = np.flatnonzero(plies > ply)
        pits = moves[playing, ply] - 3 * (ply % 2)
        children = first_child[pits] if ply == 0 else tables.child[position[playing], pits]
        assert (children >= 0).all(), f"an illegal move at ply {ply}"
        position[playing] = children
        if ply + 1 < rules.ply_cap:
            found_indices.append(children)
            found_plies.append(np.full(len(playing), ply + 1))
    return np.concatenate(found_indices), np.concatenate(found_plies)


def game_positions(spec: str, rules: Rules, tables: PositionTables, games: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (position, ply) of ``games`` seeded games of each pairing of ``spec`` in
    both seats against random and against itself."""
    indices, plies = [], []
    played = tables if rules.ply_cap == tables.rules.ply_cap else capped_tables(rules)
    for seed, (south, north) in enumerate([(spec, "random"), ("random", spec), (spec, spec)]):
        batch = play_batch(games, south, north, rules=rules, seed=seed, tables=played)
        found = replayed_positions(batch, rules, tables)
        indices.append(found[0])
        plies.append(found[1])
    keys = np.unique(np.concatenate(indices) * (rules.ply_cap + 1) + np.concatenate(plies))
    return keys // (rules.ply_cap + 1), keys % (rules.ply_cap + 1)


def sampled(indices: np.ndarray, plies: np.ndarray, spec: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    if spec != "alphabeta(depth=4)" or len(indices) <= DEEP_SEARCH_SAMPLE:
        return indices, plies
    keep = np.sort(np.random.default_rng(seed).choice(len(indices), DEEP_SEARCH_SAMPLE, replace=False))
    return indices[keep], plies[keep]


# --- 1. every table strategy chooses as its scalar version ------------------------------------


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda rules: rules.name)
@pytest.mark.parametrize("games", GAMES)
def test_the_table_chooses_as_the_scalar_strategy_in_every_game_position(rules, spec, games, tables_of):
    tables = tables_of(rules)
    indices, plies = game_positions(spec, rules, tables, games)
    assert (plies == 0).sum() == 1 and len(indices) > 100
    assert_table_is_scalar(spec, rules, tables, *sampled(indices, plies, spec, seed=1))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda rules: rules.name)
@pytest.mark.parametrize("count", UNIFORM)
def test_the_table_chooses_as_the_scalar_strategy_in_uniform_positions(rules, spec, count, tables_of):
    tables = tables_of(rules)
    indices, plies = uniform_positions(rules, tables, count, seed=len(rules.name) + count)
    assert_table_is_scalar(spec, rules, tables, *sampled(indices, plies, spec, seed=2))


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
@pytest.mark.parametrize("rules", EDGE_RULES, ids=lambda rules: rules.name)
def test_the_table_chooses_as_the_scalar_strategy_at_small_caps(rules, spec, tables_of):
    tables = tables_of(rules)
    indices, plies = game_positions(spec, rules, tables, 500)
    uniform = uniform_positions(rules, tables, 10_000, seed=3)
    assert_table_is_scalar(spec, rules, tables, np.concatenate([indices, uniform[0]]), np.concatenate([plies, uniform[1]]))


@pytest.mark.parametrize("count", [40, pytest.param(200, marks=pytest.mark.slow)])
@pytest.mark.parametrize("spec", ["perfect", *GRADED_SPECS], ids=spec_id)
def test_the_perfect_tables_choose_as_the_solution_where_the_values_never_settle(spec, count, tables_of):
    # The positions marked VARIES (a move to a position whose value cycles with the plies
    # left) at every plies left from far_from up: rare in uniform samples, so taken here one by one.
    for rules in (Rules(), RULE_SETS[2]):
        tables = tables_of(rules)
        table = policy_table(spec, rules, tables=tables)
        assert len(table.varying) > 0
        chosen = np.random.default_rng(count).choice(table.varying, min(len(table.varying), count), replace=False)
        plies_left = np.arange(table.far_from, rules.ply_cap)
        indices, plies = np.repeat(chosen, len(plies_left)), np.tile(rules.ply_cap - plies_left, len(chosen))
        assert_table_is_scalar(spec, rules, tables, indices, plies)


def test_the_replayed_positions_are_those_play_game_shows(tables_of):
    rules = RULE_SETS[2]
    tables = tables_of(rules)
    batch = play_batch(40, "perfect", "random", rules=rules, seed=9, tables=capped_tables(rules))
    replayed = set(zip(*(column.tolist() for column in replayed_positions(batch, rules, tables)), strict=True))
    shown = set()

    def on_move(here: Position, pit: int) -> None:
        view = here.board if here.mover == 0 else rotate(here.board)
        shown.add((tables.index.rank(view), here.ply))

    for game_seed in game_seeds(9, 40):
        play_game("perfect", "random", rules=rules, seed=int(game_seed), on_move=on_move)
    assert shown <= replayed and len(replayed - shown) <= 40  # only the final positions are not moved in


def test_pits_is_pit_of_the_cuts_at_every_boundary_draw(tables_of):
    for spec in ("heuristic", "perfect(epsilon=0.1)", "perfect(temperature=1.0)"):
        table = policy_table(spec, RULE_SETS[1], tables=tables_of(RULE_SETS[1]))
        for c in range(len(table.keys)):
            cuts = (int(table.cuts1[c]), int(table.cuts2[c]), int(table.cuts3[c]))
            draws = sorted({0, SCALE - 1} | {d for cut in cuts for d in (cut - 1, cut, cut + 1) if 0 <= d < SCALE})
            got = table.pits(np.full(len(draws), c), np.array(draws, dtype=np.int64)).tolist()
            assert got == [pit_of(cuts, draw) for draw in draws], (spec, table.keys[c])
            assert sum(table.chances(np.array([c]))[0]) in (0, SCALE)
        assert set(table.pits(np.array([table.classes_of_keys(np.array([0]))[0]]), np.array([7])).tolist()) == {NO_MOVE}


# --- 2. alpha-beta within its depth is the solver ---------------------------------------------


def table_keys(table: PolicyTable, positions_: np.ndarray, plies_left: int) -> np.ndarray:
    classes = table.classes_at(positions_, plies_left)  # may number keys not met before
    return np.asarray(table.keys, dtype=np.int64)[classes]


@pytest.mark.parametrize("depth", [3, SMALL_CAP.ply_cap, SMALL_CAP.ply_cap + 5])
def test_alphabeta_within_its_depth_chooses_as_perfect_on_every_position(depth, tables_of):
    rules = SMALL_CAP
    tables = tables_of(rules)
    alphabeta = policy_table(f"alphabeta(depth={depth})", rules, tables=tables)
    perfect = policy_table("perfect", rules, tables=tables)
    every = np.arange(tables.size)
    for plies_left in range(1, rules.ply_cap):
        same = np.array_equal(table_keys(alphabeta, every, plies_left), table_keys(perfect, every, plies_left))
        assert same == (plies_left <= depth), plies_left  # beyond its depth alpha-beta is no longer exact
    if depth >= rules.ply_cap:  # the first move too
        assert alphabeta.keys[alphabeta.first] == perfect.keys[perfect.first]


@pytest.mark.parametrize("count", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_alphabeta_within_its_depth_chooses_as_perfect_on_the_default_rules(depth, count, default_tables):
    alphabeta = policy_table(f"alphabeta(depth={depth})", Rules(), tables=default_tables)
    perfect = policy_table("perfect", Rules(), tables=default_tables)
    sample = np.random.default_rng(depth + count).integers(0, default_tables.size, count)
    for plies_left in range(1, depth + 1):
        assert np.array_equal(table_keys(alphabeta, sample, plies_left), table_keys(perfect, sample, plies_left)), plies_left
    assert not np.array_equal(table_keys(alphabeta, sample, depth + 1), table_keys(perfect, sample, depth + 1))


@pytest.mark.parametrize("rules", [SMALL_CAP, RULE_SETS[2]], ids=lambda rules: rules.name)
def test_the_sweeps_of_alphabeta_are_the_solution(rules, tables_of):
    tables = tables_of(rules)
    solved = solution(rules)
    every = np.arange(tables.size)
    for plies in (1, 4, 9):
        swept = sweep_values(tables, plies)
        for k in range(plies + 1):
            assert np.array_equal(swept.values_of(every, k), solved.values_of(every, k)), (plies, k)
        assert np.array_equal(swept.final, solved.values_of(every, plies))


def test_the_sweeps_are_the_solution_on_the_default_rules(default_tables):
    swept = sweep_values(default_tables, 3)
    solved = solution(Rules())
    sample = np.random.default_rng(6).integers(0, default_tables.size, 1_000_000)
    for k in range(4):
        assert np.array_equal(swept.values_of(sample, k), solved.values_of(sample, k)), k


# --- 3. epsilon 0 and 1, and a huge temperature ------------------------------------------------


def assert_same_games(got: GameBatch, expected: GameBatch) -> None:
    for name in (*GAME_COLUMNS, "moves", "move_offsets"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    for name, counts in expected.events.items():
        assert np.array_equal(got.events[name], counts), name


@pytest.mark.parametrize("rules", [Rules(), RULE_SETS[1]], ids=lambda rules: rules.name)
def test_epsilon_zero_plays_the_games_of_perfect_and_epsilon_one_those_of_random(rules, tables_of):
    tables = tables_of(rules)
    same = [
        (("perfect(epsilon=0)", "heuristic"), ("perfect", "heuristic")),
        (("random", "perfect(epsilon=0.0)"), ("random", "perfect")),
        (("perfect(epsilon=0)", "perfect(epsilon=0)"), ("perfect", "perfect")),
        (("perfect(epsilon=1)", "greedy"), ("random", "greedy")),
        (("heuristic", "perfect(epsilon=1.0)"), ("heuristic", "random")),
        (("perfect(epsilon=1)", "perfect(epsilon=1)"), ("random", "random")),
    ]
    for graded, plain in same:
        assert_same_games(
            play_batch(2000, *graded, rules=rules, seed=11, tables=tables),
            play_batch(2000, *plain, rules=rules, seed=11, tables=tables),
        )
        for seed in range(20):
            assert play_game(*graded, rules=rules, seed=seed).moves == play_game(*plain, rules=rules, seed=seed).moves, (
                graded,
                seed,
            )


@pytest.mark.parametrize("spec", ["perfect(epsilon=1)", "perfect(temperature=1e9)"], ids=spec_id)
def test_a_perfect_player_of_full_randomness_has_uniform_cuts(spec, tables_of):
    # Exact first: every class the table meets gives each legal move 2**32 / n draws (epsilon = 1:
    # the cuts of random exactly; temperature 1e9: within exp(-84 / 1e9) of it, < 400 draws).
    rules = RULE_SETS[1]
    tables = tables_of(rules)
    table = policy_table(spec, rules, tables=tables)
    every = np.arange(tables.size)
    classes = np.unique(np.concatenate([table.classes_at(every, k) for k in (1, 2, 5, rules.ply_cap - 1)] + [[table.first]]))
    chances = table.chances(classes)
    legal = np.array([[table.keys[c] >> pit & 1 for pit in range(3)] for c in classes.tolist()], dtype=bool)
    n = legal.sum(axis=1, keepdims=True)
    uniform = np.where(legal, SCALE / np.maximum(n, 1), 0)
    assert np.abs(chances - uniform).max() <= (1 if "epsilon" in spec else 400)


def chi_square_p_value(statistic: float, degrees: int) -> float:
    """The upper tail of the chi-square distribution for 1 or 2 degrees of freedom (closed forms)."""
    return math.erfc(math.sqrt(statistic / 2)) if degrees == 1 else math.exp(-statistic / 2)


@pytest.mark.parametrize("spec", ["perfect(epsilon=1)", "perfect(temperature=1e9)"], ids=spec_id)
def test_a_perfect_player_of_full_randomness_chooses_uniformly(spec, tables_of):
    # Pearson's chi-square goodness of fit of the rank of the chosen move among the n legal ones
    # (n = 2 and n = 3 apart), one seeded draw in each of 60,000 uniform positions, each test at
    # the 0.1% level: a uniform chooser fails one of these four tests for a given seed with
    # probability under 0.4%. The seeds are fixed, so the outcome is too. With more than 10,000
    # choices a group, a pit favoured by 0.02 in probability gives p < 1e-6.
    rules = RULE_SETS[1]
    tables = tables_of(rules)
    strategy = make_strategy(spec)
    counts = {2: [0, 0], 3: [0, 0, 0]}
    indices, plies = uniform_positions(rules, tables, 60_000, seed=12)
    for seed, (view, ply) in enumerate(zip(tables.index.codes(indices).tolist(), plies.tolist(), strict=True)):
        here = scalar_position(rules, view, ply)
        if len(here.moves) >= 2:
            counts[len(here.moves)][here.moves.index(strategy.choose(here, Rng.for_game(seed)))] += 1
    for n, observed in counts.items():
        total = sum(observed)
        assert total > 10_000, n
        statistic = sum((count - total / n) ** 2 / (total / n) for count in observed)
        assert chi_square_p_value(statistic, n - 1) > 1e-3, (n, observed)


# --- 4. every batched pairing is play_game -------------------------------------------------------


@pytest.mark.parametrize("south", PAIRED_SPECS, ids=spec_id)
@pytest.mark.parametrize("rules", [Rules(), SMALL_CAP], ids=lambda rules: rules.name)
def test_every_batched_pairing_plays_the_games_of_play_game(rules, south, default_tables):
    # SMALL_CAP's tables carry its cap (see test_play_batch_stops_at_the_cap_of_its_rules), and
    # a tenth of its games run into it: the classes near the cap are played too.
    tables = default_tables if rules == Rules() else capped_tables(rules)
    for north in PAIRED_SPECS:
        batch = play_batch(100, south, north, rules=rules, seed=13, tables=tables)
        for i, game_seed in enumerate(game_seeds(13, 100).tolist()):
            assert batch.record(i) == play_game(south, north, rules=rules, seed=game_seed), (south, north, i)


@pytest.mark.parametrize(("south", "north"), [("random", "random"), ("random", "perfect"), ("alphabeta(depth=2)", "random")])
def test_play_batch_stops_at_the_cap_of_its_rules(south, north, tables_of):
    # The cap is the rules', whatever cap the tables were loaded with: play_batch loads
    # table_rules(rules) (the default cap) when it is given no tables, as the pipeline's runner does.
    rules = SMALL_CAP
    for tables in (None, tables_of(rules)):
        batch = play_batch(300, south, north, rules=rules, seed=14, tables=tables)
        assert batch.plies.max() <= rules.ply_cap
        for i, game_seed in enumerate(game_seeds(14, 300).tolist()):
            assert batch.record(i) == play_game(south, north, rules=rules, seed=game_seed), i


# --- 5. bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, message",
    [
        ("perfect(epsilon=1.5)", "epsilon must be a number from 0 to 1, not 1.5"),
        ("perfect(epsilon=-0.1)", "epsilon must be a number from 0 to 1, not -0.1"),
        ("perfect(epsilon=nan)", "epsilon must be a number from 0 to 1, not nan"),
        ("perfect(epsilon=inf)", "epsilon must be a number from 0 to 1, not inf"),
        ("perfect(epsilon=high)", "epsilon must be a number from 0 to 1, not 'high'"),
        ("perfect(temperature=0)", "temperature must be a number above 0, not 0"),
        ("perfect(temperature=-2.5)", "temperature must be a number above 0, not -2.5"),
        ("perfect(temperature=nan)", "temperature must be a number above 0, not nan"),
        ("perfect(temperature=inf)", "temperature must be a number above 0, not inf"),
        ("perfect(temperature=-inf)", "temperature must be a number above 0, not -inf"),
        ("alphabeta(depth=0)", "depth must be a whole number from 1 to 10,000, not 0"),
        ("perfect(epsilon=0.1,temperature=1)", "give epsilon or temperature, not both"),
    ],
)
def test_a_bad_parameter_is_one_line_naming_the_allowed_values(spec, message):
    with pytest.raises(UnknownStrategyError) as error:
        make_strategy(spec)
    text = str(error.value)
    assert message in text and repr(spec) in text and "\n" not in text
    with pytest.raises(UnknownStrategyError):
        policy_table(spec, Rules(stones_per_pit=3))


def test_mcts_has_no_policy_table():
    assert not is_table_strategy("mcts(playouts=10)")
    assert all(is_table_strategy(spec) for spec in SPECS)
    with pytest.raises(NotATableStrategyError) as error:
        policy_table("mcts(playouts=10)", Rules(stones_per_pit=3))
    assert isinstance(error.value, ValueError)
    assert "'mcts(playouts=10)'" in str(error.value) and "\n" not in str(error.value)


def test_tables_of_other_rules_are_refused(default_tables):
    with pytest.raises(ValueError, match="modiar-stones3"):
        policy_table("greedy", Rules(stones_per_pit=3), tables=default_tables)


# --- 7. the cache -----------------------------------------------------------------------------

CACHED_RULES = Rules(stones_per_pit=3, ply_cap=20)  # perfect has positions marked VARIES here
CACHED_SPECS = ["heuristic", "alphabeta(depth=3)", "perfect"]


def fresh(tables: PositionTables) -> PositionTables:
    """The same tables as a new object: policy_table keeps its tables by the tables' identity."""
    return dataclasses.replace(tables)


STATE = ("far", "varying", "varying_classes", "cuts1", "cuts2", "cuts3", "keys", "first", "far_from")


def state(table: PolicyTable) -> dict[str, object]:
    """A copy of what a table holds when made: using it numbers (and cuts) the keys it meets next."""
    return {name: np.array(getattr(table, name)) for name in STATE}


def assert_same_table(got: PolicyTable, expected: PolicyTable, made: dict[str, object], rules: Rules) -> None:
    """``got``, as made, holds what ``expected`` held when made (``made``), and both give every
    position the same key at every plies left."""
    for name, value in state(got).items():
        assert np.array_equal(value, made[name]), name
    every = np.arange(got.tables.size)
    for plies_left in range(1, rules.ply_cap):
        assert np.array_equal(table_keys(got, every, plies_left), table_keys(expected, every, plies_left)), plies_left


def no_building(*_: object) -> None:
    raise AssertionError("built or swept again instead of read from the cache")


@pytest.mark.parametrize("spec", CACHED_SPECS, ids=spec_id)
def test_a_cached_table_read_from_a_fresh_folder_is_the_built_one(spec, tmp_path, tables_of, monkeypatch):
    tables = tables_of(CACHED_RULES)
    built = policy_table(spec, CACHED_RULES, tables=fresh(tables), cache=tmp_path / "built")
    made = state(built)
    path = policy_path(spec, CACHED_RULES, tmp_path / "built")
    assert path.exists()
    (tmp_path / "copy").mkdir()
    shutil.copy(path, tmp_path / "copy" / path.name)
    monkeypatch.setattr("engine.players.policy._build", no_building)
    monkeypatch.setattr("engine.players.values.sweep_values", no_building)  # alphabeta's sweeps come from the file too
    read = policy_table(spec, CACHED_RULES, tables=fresh(tables), cache=tmp_path / "copy")
    assert read is not built
    assert_same_table(read, built, made, CACHED_RULES)


def flip(data: bytes, offset: int) -> bytes:
    return data[:offset] + bytes([data[offset] ^ 0xFF]) + data[offset + 1 :]


def central_directory(data: bytes) -> int:
    """Where the zip's central directory starts (its end record's field)."""
    end = data.rfind(b"PK\x05\x06")
    start = int.from_bytes(data[end + 16 : end + 20], "little")
    assert data[start : start + 4] == b"PK\x01\x02"
    return start


CORRUPTIONS = {
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "a byte of the data flipped": lambda data: flip(data, len(data) // 3),
    "a byte of an array's header flipped": lambda data: flip(data, data.find(b"descr")),
    "the compression method of the central directory flipped": lambda data: flip(data, central_directory(data) + 10),
    "the version needed of the central directory flipped": lambda data: flip(data, central_directory(data) + 6),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("spec", ["alphabeta(depth=3)", "perfect"], ids=spec_id)
def test_a_corrupt_cache_file_is_built_again_with_a_warning(spec, corruption, tmp_path, tables_of, caplog, monkeypatch):
    tables = tables_of(CACHED_RULES)
    built = policy_table(spec, CACHED_RULES, tables=fresh(tables), cache=tmp_path)
    made = state(built)
    path = policy_path(spec, CACHED_RULES, tmp_path)
    path.write_bytes(CORRUPTIONS[corruption](path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="engine.players.policy"):
        again = policy_table(spec, CACHED_RULES, tables=fresh(tables), cache=tmp_path)
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(path) in warnings[0] and "building it again" in warnings[0], warnings
    assert "\n" not in warnings[0]
    assert_same_table(again, built, made, CACHED_RULES)
    caplog.clear()
    monkeypatch.setattr("engine.players.policy._build", no_building)  # the rebuilt table was written back whole
    with caplog.at_level(logging.WARNING, logger="engine.players.policy"):
        reread = policy_table(spec, CACHED_RULES, tables=fresh(tables), cache=tmp_path)
    assert not caplog.records
    assert_same_table(reread, built, made, CACHED_RULES)


NEAR_CAP_RULES = [Rules(stones_per_pit=4, ply_cap=60), Rules(stones_per_pit=3, ply_cap=40)]


@pytest.mark.parametrize("rules", NEAR_CAP_RULES, ids=lambda rules: rules.name)
def test_near_the_cap_perfect_keeps_its_far_class_only_where_no_child_value_changes(rules):
    """Below far_from, classes_at computes the keys of the positions not yet settled and gives
    the others their far class: at every plies left, every position's class must be that of
    its key worked out from the solution (capture minus the child's value with k - 1 plies left)."""
    table = policy_table("perfect(temperature=1.0)", rules)
    everything = np.arange(table.tables.size)
    child = table.tables.child
    solved = solution(rules)
    for plies_left in range(1, table.far_from):
        values = solved.values_of(np.maximum(child, 0).reshape(-1), plies_left - 1).reshape(child.shape)
        q = table.tables.captured.astype(np.int64) - values.astype(np.int64)
        classes = table.classes_at(everything, plies_left)
        np.testing.assert_array_equal(np.array(table.keys)[classes], pack_keys(child >= 0, q), err_msg=str(plies_left))
    assert table.sparse_floor() == 1  # sparse products go on to the cap
    # Where a position is not unsettled below k plies left, its class with k plies left is its far class.
    below = table.unsettled_below(everything)
    for plies_left in range(1, table.far_from):
        kept = below <= plies_left
        np.testing.assert_array_equal(table.classes_at(everything[kept], plies_left), table.far[kept])


@pytest.mark.parametrize("spec", ["perfect(temperature=1.0)", "perfect(epsilon=0.1)", "greedy"])
def test_near_the_cap_classes_followed_ply_by_ply_are_those_of_classes_at(spec):
    """engine.players.near_cap.NearCap follows the children's values down the plies left (two a call, as
    one player's turns come) over a growing prefix of the positions, most unsettled first: at
    every call its classes have the keys classes_at gives."""
    rules = NEAR_CAP_RULES[1]
    table = policy_table(spec, rules)
    everything = np.arange(table.tables.size)
    below = table.unsettled_below(everything)
    at = everything[np.lexsort((everything, -below))]
    near = NearCap(table)
    keys = np.array(table.keys, dtype=object)
    for plies_left in range(rules.ply_cap - 1, 0, -2):
        prefix = at[: int(np.count_nonzero(below > plies_left))]
        followed = near(prefix, plies_left)
        assert near(prefix, plies_left) is not None  # the second chain's call: remembered
        keys = np.array(table.keys, dtype=object)
        np.testing.assert_array_equal(keys[followed], keys[table.classes_at(prefix, plies_left)], err_msg=str(plies_left))


# ---------------------------------------------------------------------------------------------
# What a strategy says about itself


@pytest.mark.parametrize(
    ("spec", "solution", "searches", "wide", "family"),
    [
        ("random", False, False, True, None),
        ("greedy", False, False, False, None),
        ("heuristic", False, False, False, None),
        ("alphabeta(depth=4)", False, False, False, "alphabeta(depth=d)"),
        ("mcts(playouts=100)", False, True, False, None),
        ("perfect", True, False, False, None),
        ("perfect(epsilon=0.1)", True, False, True, "perfect(epsilon=e)"),
        ("perfect(epsilon=0.0)", True, False, False, "perfect(epsilon=e)"),  # plays perfect's games
        ("perfect(temperature=1.0)", True, False, True, "perfect(temperature=T)"),
    ],
)
def test_each_strategy_says_what_the_pipeline_asks_of_it(spec, solution, searches, wide, family):
    strategy = engine.players.registry.engine_strategy(spec)
    assert (strategy.needs_solution, strategy.searches, strategy.wide, strategy.family) == (solution, searches, wide, family)
    assert is_table_strategy(spec) is strategy.has_policy_table is not searches


def test_a_strategy_without_values_has_no_policy_table_rather_than_perfects():
    class Leftmost(engine.players.base.EngineStrategy):  # says it has a table, yet no values for it
        spec = "leftmost"
        has_policy_table = True

        def choose(self, position, rng):
            return position.moves[0]

    with pytest.raises(NotATableStrategyError, match="'leftmost' has no values for a policy table"):
        policy_table(Leftmost(), Rules(stones_per_pit=2), cache=None)


@pytest.mark.parametrize("count", [0, 1, 3000, 50_000])
def test_a_policy_tables_keys_are_found_by_their_hashed_slots_as_a_binary_search_finds_them(count: int) -> None:
    """engine.players.numbering.KeySlots finds a key's place among the keys met so far by a hashed slot, and
    the keys whose slot another took by a binary search: with thousands of keys some share one."""
    from engine.players.numbering import KeySlots

    rng = np.random.default_rng(count)
    known = np.unique(rng.integers(0, 1 << 27, count)).astype(np.int64)
    asked = np.concatenate([known, rng.integers(0, 1 << 27, 20_000), known[::-1]]).astype(np.int64)
    slots = KeySlots(known)
    place = np.minimum(np.searchsorted(known, asked), max(len(known) - 1, 0))
    expected = np.where(known[place] == asked, place, -1) if len(known) else np.full(len(asked), -1)
    np.testing.assert_array_equal(slots.find(asked), expected)
    assert slots.crowded or count < 3000  # the binary search was needed, and gave the same
