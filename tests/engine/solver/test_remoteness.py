"""Remoteness (engine.solver.remoteness) against a brute force written from its definition.

The brute force (tests/brute_remoteness.py) shares nothing with the engine: it walks every game
from the start breadth first, a ply at a time, with the plain reference implementation of
RULES.md (tests/reference.py), then computes each state's value, remoteness and longest
value-optimal line back from the cap, as docs/remoteness.md defines them. Every state of every
game is compared, at every ply.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from brute_remoteness import brute_force
from locations import ROOT

import engine
from engine import Rules
from engine.solver import AT_CAP, Remoteness, remoteness, solve, start_verdict, verdict
from engine.tables.positions import build_tables

# Two 3-stone rule sets (one where a singleton is a pass, so that every game can run to the cap;
# with the default rules all 48 states of 3 stones a pit end within 7 plies) and one 4-stone
# rule set, at caps where the brute force takes seconds.
BRUTE_FORCE = [
    (Rules(stones_per_pit=3, capture_counts=(2, 3)), 40),
    (Rules(stones_per_pit=3, min_stones_to_play=1), 24),
    (Rules(stones_per_pit=4), 20),
]


@functools.cache
def small_remoteness(rules: Rules, cap: int) -> Remoteness:
    return remoteness(rules, cap, tables=build_tables(rules), cache=None, progress=False)


@pytest.mark.parametrize(("rules", "cap"), BRUTE_FORCE, ids=lambda case: getattr(case, "name", str(case)))
def test_every_state_of_every_game_has_the_brute_forces_remoteness(rules, cap):
    truth, found = brute_force(rules, cap), small_remoteness(rules, cap)
    solution = solve(rules, cap, tables=build_tables(rules), cache=None, progress=False)
    for (board, mover, ply), value in truth.value.items():
        hurry, longest = truth.hurry[board, mover, ply], truth.longest[board, mover, ply]
        assert solution.value(board, mover, ply) == value, (engine.unpack(board), mover, ply)
        assert found.at(board, mover, ply) == (None if hurry == AT_CAP else hurry), (engine.unpack(board), mover, ply)
        assert found.longest_at(board, mover, ply) == (None if longest == AT_CAP else longest), (engine.unpack(board), mover, ply)
    start = engine.start_board(rules)
    assert found.start() == found.at(start, 0, 0)
    assert found.start(longest=True) == found.longest_at(start, 0, 0)


def test_the_brute_force_meets_both_kinds_of_verdict():
    # The cases above are worth comparing only if they hold lines that end and lines the cap stops.
    for rules, cap in BRUTE_FORCE[:1] + BRUTE_FORCE[2:]:
        hurry = brute_force(rules, cap).hurry.values()
        assert any(0 < lines < AT_CAP for lines in hurry) and AT_CAP in hurry, rules.name
    # ... and one whose iteration stops early, every position settled (its later plies filled in).
    assert "settled_at" in small_remoteness(*BRUTE_FORCE[0]).timings
    singletons = brute_force(*BRUTE_FORCE[1])
    start = next(iter(singletons.layers[0]))
    assert singletons.longest[(*start, 0)] == AT_CAP  # a singleton is a pass: some best line runs to the cap


@pytest.mark.parametrize(("rules", "cap"), BRUTE_FORCE[:1] + BRUTE_FORCE[2:], ids=lambda case: getattr(case, "name", str(case)))
def test_the_start_under_every_smaller_cap_is_that_of_a_game_so_capped(rules, cap):
    found = small_remoteness(rules, cap)
    for smaller in (1, 2, 5, 11, cap - 1):
        again = small_remoteness(rules, smaller)
        assert found.start(smaller) == again.start(), smaller
        assert found.start(smaller, longest=True) == again.start(longest=True), smaller


def play_out(rules: Rules, solution: engine.Solution, lines: Remoteness) -> list[int]:
    """A game from the start in which each side plays a value-optimal move of least remoteness
    when the value favours it or is 0, of greatest otherwise: the remoteness's own line."""
    board, mover, ply, margin, remoteness_left = engine.start_board(rules), 0, 0, 0, []
    while True:
        remoteness_left.append(lines.at(board, mover, ply))
        moves = engine.legal_moves(board, mover, ply, rules)
        if not moves:
            break
        value = solution.value(board, mover, ply)
        best = solution.best_moves(board, mover, ply)
        after = {pit: engine.apply_move(board, mover, pit, ply, rules) for pit in best}
        remaining = {pit: lines.at(result.board, 1 - mover, ply + 1) for pit, result in after.items()}
        pick = (min if value >= 0 else max)(best, key=lambda pit: AT_CAP if remaining[pit] is None else remaining[pit])
        margin += after[pick].captured if mover == 0 else -after[pick].captured
        board, mover, ply = after[pick].board, 1 - mover, ply + 1
    south = sum(engine.unpack(board)[:3]) - sum(engine.unpack(board)[3:])
    assert margin + south == solution.start_value()
    return remoteness_left


@pytest.mark.parametrize(("rules", "cap"), BRUTE_FORCE[:1] + BRUTE_FORCE[2:], ids=lambda case: getattr(case, "name", str(case)))
def test_a_game_played_by_the_remoteness_ends_when_it_says(rules, cap):
    game = rules.replace(ply_cap=cap)
    solution = solve(rules, cap, tables=build_tables(rules), cache=None, progress=False)
    left = play_out(game, solution, small_remoteness(rules, cap))
    assert left[0] is not None
    assert left == list(range(left[0], -1, -1))  # one ply closer each move, and 0 at the end


def test_remoteness_is_never_shorter_than_a_line_can_be():
    # R <= L, both at least 1 where a move is legal, and R at k is AT_CAP or at most k.
    rules, cap = BRUTE_FORCE[0]
    found = small_remoteness(rules, cap)
    indices = np.arange(found.index.size)
    for k in (0, 1, 3, 17, cap):
        hurry, longest = found.of(indices, k), found.longest_of(indices, k)
        assert np.all(hurry <= longest)
        assert np.all((hurry == AT_CAP) | (hurry <= k))
        assert np.all(hurry[found.no_move] == (AT_CAP if k == 0 else 0))
        assert np.all(hurry[~found.no_move] >= 1)


@pytest.mark.slow
def test_the_default_start_is_played_out_in_its_remoteness_as_the_readme_says():
    rules = Rules()
    lines = remoteness(rules, progress=False)
    left = play_out(rules, solve(rules, progress=False), lines)
    assert left[0] == lines.start()
    assert left == list(range(left[0], -1, -1))
    moves = engine.analyse(engine.start_board(rules), rules=rules)
    plies = dict(zip(moves["pit"], moves["remoteness"], strict=True))
    values = dict(zip(moves["pit"], moves["value"], strict=True))
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    claims = [
        f"North can make the game end by ply **{lines.start()}**",
        f"the longest value-optimal game lasts {lines.start(longest=True)} plies",
        f"end after {plies[2]} plies (pit 2, worth {values[2]:+d})".replace("+", "").replace("-", "−"),
        f"{plies[1]} (pit 1, worth {values[1]:+d})".replace("-", "−"),
        f"and {plies[0]} (pit 0, worth {values[0]:+d})".replace("-", "−"),
    ]
    assert [claim for claim in claims if claim not in readme] == []


@pytest.mark.parametrize(("rules", "cap"), BRUTE_FORCE[:1] + BRUTE_FORCE[2:], ids=lambda case: getattr(case, "name", str(case)))
def test_perfect_hurrying_plays_every_game_in_the_starts_remoteness(rules, cap, cache):
    # perfect(ties=hurry) against itself, batched from its policy table: every game keeps the
    # start's value and lasts exactly its remoteness, as the brute force found it.
    game = rules.replace(ply_cap=cap)
    truth = brute_force(rules, cap)
    start = next(iter(truth.layers[0]))
    batch = engine.play_batch(200, "perfect(ties=hurry)", "perfect(ties=hurry)", rules=game, seed=3)
    assert set(batch.plies.tolist()) == {truth.hurry[(*start, 0)]}
    assert set((batch.score_south - batch.score_north).tolist()) == {truth.value[(*start, 0)]}


def test_perfect_hurrying_is_exactly_as_strong_as_perfect_and_its_exact_games_last_the_remoteness():
    rules = Rules(stones_per_pit=4)
    hurried, perfect = (engine.exploitability(spec, rules=rules) for spec in ("perfect(ties=hurry)", "perfect"))
    assert (hurried.as_south, hurried.as_north) == (perfect.as_south, perfect.as_north)
    outcome = engine.exact_outcome("perfect(ties=hurry)", "perfect(ties=hurry)", rules=rules)
    assert outcome.mean_plies == pytest.approx(remoteness(rules, progress=False).start(), abs=1e-12)
    assert outcome.plies[round(outcome.mean_plies)] == pytest.approx(1.0, abs=1e-12)  # every game alike


@pytest.mark.parametrize(
    ("rules", "cap"),
    [
        *BRUTE_FORCE,
        (Rules(stones_per_pit=4, capture_rows="own"), 80),
        (Rules(stones_per_pit=4, min_stones_to_play=1, sow_origin=False), 60),
    ],
    ids=lambda case: getattr(case, "name", str(case)),
)
def test_the_verdict_from_the_reachable_positions_alone_is_the_whole_solutions(rules, cap):
    # start_verdict iterates over the positions reachable from the start only, without the
    # solution; the verdict is the one the solution and the remoteness of every position give,
    # and its remoteness the brute force's where that is cheap.
    game = rules.replace(ply_cap=cap)
    tables = build_tables(rules)
    quick = start_verdict(game, tables)
    assert quick == verdict(solve(rules, cap, tables=tables, cache=None, progress=False), small_remoteness(rules, cap))
    if (rules, cap) in BRUTE_FORCE:
        truth = brute_force(rules, cap)
        start = next(iter(truth.layers[0]))
        assert quick.value == truth.value[(*start, 0)]
        assert quick.remoteness == (None if truth.hurry[(*start, 0)] == AT_CAP else truth.hurry[(*start, 0)])
