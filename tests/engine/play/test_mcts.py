"""Batched MCTS (engine.play.mcts through engine.play_batch): game for game the games of
engine.play_game, whose scalar MctsStrategy is the definition."""

from __future__ import annotations

import numpy as np
import pytest
from test_batch import assert_same_columns, assert_same_records, scalar_games, small_tables

import engine
from engine import Rules
from engine.game.board import NORTH, rotate
from engine.game.rng import Rng, game_seeds
from engine.game.rules import ROW
from engine.play import batch as batched
from engine.play.batch import play_batch
from engine.play.mcts import Board, Forest, Streams
from engine.players.search import MctsStrategy

# Small rule sets whose scalar mcts games are quick: the first move not forfeited, singletons
# playable with games into a short cap (playouts cut by it), captures in the opponent's row only,
# a cap of 5 plies (searches whose every leaf is the cap) and a start without a legal move.
VARIANTS = [
    Rules(stones_per_pit=3),
    Rules(stones_per_pit=3, first_move_forfeit=False),
    Rules(stones_per_pit=3, min_stones_to_play=1, ply_cap=40),
    Rules(stones_per_pit=4, capture_rows="opponent", grand_slam="allowed"),
    Rules(stones_per_pit=4, ply_cap=5),
    Rules(stones_per_pit=1),
]
PAIRS = [
    ("mcts(playouts=6)", "random"),
    ("greedy", "mcts(playouts=6)"),
    ("mcts(playouts=9)", "mcts(playouts=9)"),
    ("mcts(playouts=2)", "mcts(playouts=13)"),
    ("mcts(playouts=5)", "perfect(epsilon=0.1)"),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda rules: rules.name)
@pytest.mark.parametrize(("south", "north"), PAIRS)
def test_variant_games_are_the_games_of_play_game(rules, south, north):
    batch = play_batch(300, south, north, rules=rules, seed=11, tables=small_tables(rules))
    records = scalar_games(south, north, rules, 11, 300)
    assert_same_columns(batch, records)
    assert_same_records(batch, records, 300)


@pytest.mark.parametrize(("south", "north"), [("mcts(playouts=40)", "mcts(playouts=40)"), ("random", "mcts(playouts=25)")])
def test_default_rules_games_are_the_games_of_play_game(default_tables, south, north):
    batch = play_batch(120, south, north, seed=20261202, tables=default_tables)
    records = scalar_games(south, north, Rules(), 20261202, 120)
    assert_same_columns(batch, records)


def test_a_game_does_not_depend_on_the_games_beside_it(monkeypatch, default_tables):
    whole = play_batch(60, "mcts(playouts=12)", "greedy", seed=3, tables=default_tables)
    monkeypatch.setattr(batched, "TREE_BYTES", 7 * batched.tree_bytes(12))  # chunks of 7 games
    chunked = play_batch(60, "mcts(playouts=12)", "greedy", seed=3, tables=default_tables)
    part = play_batch(60, "mcts(playouts=12)", "greedy", seed=3, tables=default_tables, start=45)
    assert [whole.record(i) for i in range(60)] == [chunked.record(i) for i in range(60)]
    assert [whole.record(45 + i) for i in range(15)] == [part.record(i) for i in range(15)]


def test_the_streams_draw_what_a_games_rng_draws():
    seeds = game_seeds(4, 5)
    streams = Streams(seeds)
    rngs = [Rng.for_game(int(seed)) for seed in seeds]
    for takes in ([1, 1, 1, 1, 1], [0, 1, 0, 1, 1], [1, 1, 1, 0, 0], [1, 0, 1, 0, 1], [1, 1, 1, 1, 1]):
        mask = np.array(takes, dtype=bool)
        draws = streams.draw(np.arange(5), mask.astype(np.int64))
        for i, taken in enumerate(takes):
            if taken:
                assert int(draws[i]) == rngs[i].next_u32()


@pytest.mark.parametrize("ply", [0, 5, 12])
def test_searches_of_many_playouts_choose_the_scalar_searchs_moves_and_take_its_draws(default_tables, ply):
    """Deep trees (UCB1 over hundreds of visits) from positions met in random games at one ply."""
    rules = Rules()
    found = []
    for seed in range(60):
        seen: list[engine.Position] = []
        engine.play_game("random", "random", rules=rules, seed=seed, on_move=lambda position, _, seen=seen: seen.append(position))
        if len(seen) > ply and len(seen[ply].options) > 1:
            found.append(seen[ply])
    assert len(found) >= 8
    strategy = MctsStrategy(200)
    seeds = game_seeds(9, len(found))
    rngs = [Rng.for_game(int(seed)) for seed in seeds]
    expected = [strategy.choose(position, rng) for position, rng in zip(found, rngs, strict=True)]
    index = [default_tables.index.rank(rotate(p.board) if p.mover == NORTH else p.board) for p in found]
    streams = Streams(seeds)
    forest = Forest(Board.of(default_tables, rules), len(found), strategy.playouts)
    pits = forest.search(streams, np.arange(len(found)), np.array(index, dtype=np.int64), ply)
    assert [int(pit) + ROW * p.mover for pit, p in zip(pits, found, strict=True)] == expected
    assert streams.count.tolist() == [rng.draws for rng in rngs]
