"""The contract every registered strategy meets under every variant rule set: registering a
strategy (a subclass of engine.players.base.EngineStrategy made with a name) or declaring a
rule field (engine.game.rules, with a variant in tests/variants.py) is all it takes to be tested here.

For each strategy (its default parameters, and those that give it other values) against random,
in both seats, on each small variant: the scalar game loop and the batched one play the same
games, move for move and event for event;
the batched replay (engine.play.replays) accepts every move, and at every ply the stones on the board
and those captured so far make the rule set's total; and for a strategy with a policy table the
exact outcome (engine.exact_outcome) agrees with the first player's score of sampled games.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from variants import SMALL_VARIANTS

import engine
from engine import Rules, play_batch, play_game
from engine.game.rng import game_seeds
from engine.play.batch import batchable
from engine.play.replays import replay
from engine.players import registry
from engine.players.base import REGISTERED, OneDrawStrategy
from engine.players.registry import REGISTRY, engine_strategy
from engine.tables.index import row_stones
from engine.tables.positions import load_tables

# Every registered strategy with its default parameters, and the parameters that change its values.
STRATEGIES = [*sorted(REGISTRY), "perfect(ties=hurry)"]
GAMES, SEARCHED_GAMES = 60, 4  # games a pairing and variant; a searching strategy's are costly
SAMPLED = 6_000  # games sampled against the exact outcome


def _pairings(name: str) -> list[tuple[str, str]]:
    spec = engine_strategy(name).spec
    return [(spec, "random"), ("random", spec)]


def _slow_if_long(name: str, rules: Rules) -> object:
    """A searching strategy's games of the variants whose games cycle (singletons playable) take
    a minute: those run with the slow checks (make test-slow)."""
    long = engine_strategy(name).searches and rules.min_stones_to_play == 1
    return pytest.param(name, rules, marks=pytest.mark.slow if long else (), id=f"{name}-{rules.name}")


@pytest.mark.parametrize(("name", "rules"), [_slow_if_long(name, rules) for name in STRATEGIES for rules in SMALL_VARIANTS])
def test_every_strategy_plays_alike_scalar_batched_and_replayed(name: str, rules: Rules) -> None:
    _plays_alike(name, rules)


def _plays_alike(name: str, rules: Rules) -> None:
    strategy = engine_strategy(name)
    games = SEARCHED_GAMES if strategy.searches else GAMES
    tables = load_tables(rules, progress=False)
    own, other = row_stones(tables.index)
    for south, north in _pairings(name):
        records = [play_game(south, north, rules=rules, seed=int(seed)) for seed in game_seeds(7, games)]
        assert all(record.score_south + record.score_north == rules.total_stones for record in records)
        if not batchable(south, north, rules):
            continue
        batch = play_batch(games, south, north, rules=rules, seed=7, tables=tables)
        assert batch.moves.tolist() == [pit for record in records for pit in record.moves]
        assert batch.score_south.tolist() == [record.score_south for record in records]
        for event in engine.EVENTS:
            assert batch.events[event].tolist() == [record.events[event] for record in records], event
        run = replay(rules, batch.moves, batch.move_offsets, tables)
        on_board = own[run.position].astype(np.int64) + other[run.position]
        captured = run.captured.astype(np.int64)
        before = np.cumsum(captured) - captured  # captured before each ply, over the whole batch
        before -= before[np.repeat(batch.move_offsets[:-1], run.plies)]  # ... within its own game
        assert np.array_equal(on_board + before, np.full(len(on_board), rules.total_stones))


@pytest.mark.parametrize("rules", SMALL_VARIANTS, ids=lambda rules: rules.name)
@pytest.mark.parametrize("name", [name for name in STRATEGIES if engine_strategy(name).has_policy_table])
def test_every_table_strategys_exact_outcome_is_what_its_games_score(name: str, rules: Rules) -> None:
    _exact_is_sampled(name, rules)


def _exact_is_sampled(name: str, rules: Rules) -> None:
    tables = load_tables(rules, progress=False)
    south, north = _pairings(name)[0]
    exact = engine.exact_outcome(south, north, rules=rules, tables=tables)
    assert sum(exact.margin.values()) + exact.unresolved == pytest.approx(1.0, abs=1e-12)
    batch = play_batch(SAMPLED, south, north, rules=rules, seed=8, tables=tables)
    wins = np.count_nonzero(batch.score_south > batch.score_north)
    draws = np.count_nonzero(batch.score_south == batch.score_north)
    score = (wins + draws / 2) / SAMPLED
    assert abs(score - exact.first_player_score) < 4.5 * math.sqrt(0.25 / SAMPLED)
    assert abs(float(batch.plies.mean()) - exact.mean_plies) < 4.5 * float(batch.plies.std() + 1) / math.sqrt(SAMPLED)


class _LowestValues:
    """A toy strategy's values: the lowest legal pit (mover's view) is the best."""

    spec, far_from = "leftmost", 1

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray:
        return np.broadcast_to(np.array([2, 1, 0], dtype=np.int64), captured.shape)


def test_a_strategy_registered_from_a_test_meets_the_same_contract() -> None:
    """Adding a strategy is one class: "always the leftmost legal pit", registered here and
    nowhere else, plays alike in every engine path and its exact outcome is what its games score."""

    class Leftmost(OneDrawStrategy, name="leftmost"):
        spec = "leftmost"
        has_policy_table = True

        def pick(self, options: tuple[Any, ...], draw: int) -> int:
            return 0  # options are in pit order

        def policy_values(self, tables: Any, rules: Rules) -> _LowestValues:
            return _LowestValues()

    try:
        assert "leftmost" in REGISTRY
        for rules in SMALL_VARIANTS[:4]:
            _plays_alike("leftmost", rules)
            _exact_is_sampled("leftmost", rules)
    finally:
        REGISTERED.pop("leftmost")
        for kept in (registry._CACHE, registry._CANONICAL):
            kept.pop("leftmost", None)
