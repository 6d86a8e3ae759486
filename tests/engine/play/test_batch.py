"""The batched engine plays, game for game, the games engine.play_game plays."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from variants import SMALL_VARIANTS

import engine
from engine import IllegalMoveError, Rules, UnknownStrategyError, play_game
from engine.game.rng import game_seeds, game_seeds_between
from engine.game.scoring import WINNERS
from engine.play import batch as batched
from engine.play import chunk as batch_chunk
from engine.play import columns as game_batch
from engine.play import tables as batch_tables
from engine.play.batch import play_batch
from engine.play.columns import END_REASONS, GameBatch
from engine.players.base import OneDrawStrategy
from engine.tables.positions import PositionTables, build_tables

PAIRS = [("random", "random"), ("greedy", "random"), ("random", "greedy"), ("greedy", "greedy")]

# The small variants of tests/variants.py (every field switched alone, on 2 to 4 stones a pit),
# and the edges of the batched loop: very long games, a cap of a few plies, no first move.
VARIANTS = [
    *SMALL_VARIANTS,
    Rules(stones_per_pit=2, min_stones_to_play=1),  # 400-ply games, grand slams blocked 100+ times
    Rules(stones_per_pit=4, ply_cap=5),
    Rules(stones_per_pit=1),  # the start has no legal move: every game ends at once
    Rules(stones_per_pit=1, min_stones_to_play=1, ply_cap=1),
]


@cache
def small_tables(rules: Rules) -> PositionTables:
    return build_tables(rules)


def scalar_games(south, north, rules: Rules, seed: int, games: int) -> list[engine.GameRecord]:
    return [play_game(south, north, rules=rules, seed=int(game_seed)) for game_seed in game_seeds(seed, games)]


def assert_same_columns(batch: GameBatch, records: list[engine.GameRecord]) -> None:
    """The batch's columns, compared in bulk with the scalar engine's records."""
    assert len(batch) == len(records)
    assert batch.seeds.tolist() == [record.seed for record in records]
    assert batch.plies.tolist() == [record.plies for record in records]
    assert batch.score_south.tolist() == [record.score_south for record in records]
    assert batch.score_north.tolist() == [record.score_north for record in records]
    assert [WINNERS[code] for code in batch.winner] == [record.winner for record in records]
    assert [END_REASONS[code] for code in batch.end_reason] == [record.end_reason for record in records]
    assert batch.moves.tolist() == [pit for record in records for pit in record.moves]
    assert np.array_equal(np.diff(batch.move_offsets), batch.plies)
    for name in engine.EVENTS:
        assert batch.events[name].tolist() == [record.events[name] for record in records], name


def assert_same_records(batch: GameBatch, records: list[engine.GameRecord], games: int) -> None:
    for i in range(games):
        assert batch.record(i) == records[i], f"game {i}"


@pytest.mark.parametrize(("south", "north"), PAIRS)
def test_default_rules_games_are_the_games_of_play_game(default_tables, south, north):
    batch = play_batch(3000, south, north, seed=20261130, tables=default_tables)
    records = scalar_games(south, north, Rules(), 20261130, 3000)
    assert_same_columns(batch, records)
    assert_same_records(batch, records, 300)


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda rules: rules.name)
@pytest.mark.parametrize(("south", "north"), PAIRS)
def test_variant_games_are_the_games_of_play_game(rules, south, north):
    games = 300 if rules.ply_cap > 100 and rules.min_stones_to_play == 1 else 1000
    batch = play_batch(games, south, north, rules=rules, seed=5, tables=small_tables(rules))
    records = scalar_games(south, north, rules, 5, games)
    assert_same_columns(batch, records)
    assert_same_records(batch, records, 200)


def test_long_games_keep_their_flag_counts_past_the_counter_flushes():
    rules = Rules(stones_per_pit=2, min_stones_to_play=1)
    batch = play_batch(200, "random", "greedy", rules=rules, seed=3, tables=small_tables(rules))
    assert batch.plies.max() == rules.ply_cap
    assert batch.events["grand_slam_blocked"].max() > batch_tables.FLUSH_PLIES  # more than a counter field holds
    assert_same_columns(batch, scalar_games("random", "greedy", rules, 3, 200))


def test_the_games_do_not_depend_on_how_they_are_chunked(monkeypatch, default_tables):
    whole = play_batch(500, "greedy", "random", seed=8, tables=default_tables)
    monkeypatch.setattr(batched, "CHUNK_GAMES", 37)
    monkeypatch.setattr(batch_chunk, "SEGMENT_PLIES", 3)
    monkeypatch.setattr(batch_chunk, "DROP_WHEN", 50)
    chunked = play_batch(500, "greedy", "random", seed=8, tables=default_tables)
    for name in ("seeds", "winner", "score_south", "score_north", "plies", "end_reason", "moves", "move_offsets"):
        assert np.array_equal(getattr(whole, name), getattr(chunked, name)), name
    for name in engine.EVENTS:
        assert np.array_equal(whole.events[name], chunked.events[name]), name


def test_tables_too_big_for_32_bit_steps_play_the_same_games(monkeypatch):
    rules = Rules(stones_per_pit=3, grand_slam="allowed")
    monkeypatch.setattr(batch_tables, "STEP_CHILD_BITS", 4)  # as if no child index fitted in 24 bits
    tables = build_tables(rules)  # fresh tables, so that the batch derives its own from them
    batch = play_batch(500, "greedy", "random", rules=rules, seed=2, tables=tables)
    assert batch_tables.derived_tables(tables).step.dtype == np.uint64
    assert_same_columns(batch, scalar_games("greedy", "random", rules, 2, 500))


def test_game_i_of_a_batch_is_game_i_of_a_bigger_batch(default_tables):
    small = play_batch(10, "random", "random", seed=99, tables=default_tables)
    big = play_batch(1000, "random", "random", seed=99, tables=default_tables)
    assert [small.record(i) for i in range(10)] == [big.record(i) for i in range(10)]


@pytest.mark.parametrize("seed", [0, 1, 123456789, 2**63, 2**64 - 1])
@pytest.mark.parametrize(("start", "stop"), [(0, 1), (0, 1000), (1, 7), (70_001, 70_050)])
def test_the_vectorised_seeds_are_numpys(seed, start, stop):
    assert np.array_equal(game_seeds_between(seed, start, stop), game_seeds(seed, stop)[start:])


def test_engine_strategy_objects_are_the_spec_strings(default_tables):
    objects = play_batch(300, engine.make_strategy("greedy"), engine.make_strategy("random"), seed=4, tables=default_tables)
    strings = play_batch(300, "greedy", "random", seed=4, tables=default_tables)
    assert [objects.record(i) for i in range(300)] == [strings.record(i) for i in range(300)]


class Uniform:
    """A BatchStrategy that picks uniformly among the legal pits, as RandomStrategy does."""

    spec = "random"

    def pick_batch(self, tables, positions, draws, legal):
        options = legal.sum(axis=1)
        index = (draws.astype(np.uint64) * options.astype(np.uint64)) >> np.uint64(32)
        ranks = np.cumsum(legal, axis=1) - 1  # the rank of each legal pit among the legal ones
        return np.argmax(legal & (ranks == index[:, None].astype(np.int64)), axis=1)


class Lowest(OneDrawStrategy):
    """The lowest legal pit; takes its one draw a turn like every table strategy."""

    spec = "lowest"

    def pick(self, options, draw):
        return 0


class LowestBatch:
    spec = "lowest"

    def pick_batch(self, tables, positions, draws, legal):
        return np.argmax(legal, axis=1)


def test_a_batch_strategy_plays_as_its_table_twin(default_tables):
    mixed = play_batch(400, LowestBatch(), "greedy", seed=6, tables=default_tables)
    assert_same_columns(mixed, scalar_games(Lowest(), "greedy", Rules(), 6, 400))
    generic = play_batch(400, Uniform(), Uniform(), seed=6, tables=default_tables)
    assert_same_columns(generic, scalar_games("random", "random", Rules(), 6, 400))


def test_a_batch_strategy_that_plays_an_illegal_pit_is_caught(default_tables):
    class Stubborn:
        spec = "stubborn"

        def pick_batch(self, tables, positions, draws, legal):
            return np.full(len(positions), 2)

    with pytest.raises(IllegalMoveError, match="stubborn"):
        play_batch(50, "random", Stubborn(), tables=default_tables)


def test_an_unknown_strategy_is_refused_by_name():
    with pytest.raises(UnknownStrategyError, match="'minimax'"):
        play_batch(10, "minimax", "random")


def test_a_strategy_without_a_batched_version_is_refused_by_name():
    with pytest.raises(ValueError, match="'lowest' has no batched version"):
        play_batch(10, Lowest(), "random")
    with pytest.raises(ValueError, match="a strategy is"):
        play_batch(10, 42, "random")


@pytest.mark.parametrize("n_games", [0, -5, 2.0, True, "10", None])
def test_a_bad_number_of_games_is_refused(n_games):
    with pytest.raises(ValueError, match="n_games"):
        play_batch(n_games, "random", "random")


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "7", None, True])
def test_a_bad_seed_is_refused(seed):
    with pytest.raises(ValueError, match="seed"):
        play_batch(10, "random", "random", seed=seed)


def test_tables_of_other_rules_are_refused(default_tables):
    with pytest.raises(ValueError, match="stones3"):
        play_batch(10, "random", "random", rules=Rules(stones_per_pit=3), tables=default_tables)


def test_the_columns_have_their_documented_types(default_tables):
    batch = play_batch(100, "random", "random", seed=1, tables=default_tables)
    assert len(batch) == 100 and len(batch.move_offsets) == 101
    assert batch.winner.dtype == np.uint8 and set(batch.winner.tolist()) <= {0, 1, 2}
    assert batch.end_reason.dtype == np.uint8 and batch.moves.dtype == np.uint8
    assert batch.seeds.dtype == np.uint64 and batch.plies.dtype == np.int16
    assert set(batch.events) == set(engine.EVENTS)
    assert (batch.south, batch.north, batch.rules) == ("random", "random", "modiar")
    assert np.all(batch.score_south + batch.score_north == Rules().total_stones)


def assert_same_batch(got: GameBatch, expected: GameBatch) -> None:
    for name in (*game_batch.GAME_COLUMNS, "moves", "move_offsets"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
        assert getattr(got, name).dtype == getattr(expected, name).dtype, name
    assert got.events.keys() == expected.events.keys()
    for name, counts in expected.events.items():
        assert np.array_equal(got.events[name], counts) and got.events[name].dtype == counts.dtype, name
    assert (got.south, got.north, got.rules) == (expected.south, expected.north, expected.rules)


def test_the_game_columns_are_every_column_of_one_entry_a_game(default_tables):
    batch = play_batch(10, "random", "random", tables=default_tables)
    arrays = {name for name, value in vars(batch).items() if isinstance(value, np.ndarray)}
    assert set(game_batch.GAME_COLUMNS) == arrays - {"moves", "move_offsets"}


@pytest.mark.parametrize(
    ("start", "stop"), [(0, 300), (0, 1), (1, 300), (117, 118), (117, 250), (300, 300), (-20, None), (0, None)]
)
def test_rows_are_the_games_of_that_range(default_tables, start, stop):
    batch = play_batch(300, "greedy", "random", seed=12, tables=default_tables)
    part = batch.rows(start, stop)
    games = range(len(batch))[start:stop]
    assert len(part) == len(games)
    assert list(part.records()) == [batch.record(i) for i in games]
    assert part.move_offsets[0] == 0 and part.move_offsets[-1] == len(part.moves)


def test_concatenated_rows_are_the_batch_again(default_tables):
    batch = play_batch(300, "random", "greedy", seed=13, tables=default_tables)
    assert_same_batch(
        game_batch.concatenate([batch.rows(0, 40), batch.rows(40, 40), batch.rows(40, 299), batch.rows(299)]), batch
    )
    assert game_batch.concatenate([batch]) is batch


def test_a_batch_played_in_two_seed_blocks_is_both_blocks(default_tables):
    first, second = (play_batch(200, "random", "random", seed=seed, tables=default_tables) for seed in (1, 2))
    joined = game_batch.concatenate([first.rows(150), second.rows(0, 70)])
    assert list(joined.records()) == [*list(first.records())[150:], *list(second.records())[:70]]


def test_only_games_of_one_pairing_are_concatenated(default_tables):
    ours = play_batch(10, "random", "greedy", tables=default_tables)
    theirs = play_batch(10, "greedy", "random", tables=default_tables)
    with pytest.raises(ValueError, match="one pairing"):
        game_batch.concatenate([ours, theirs])
    with pytest.raises(ValueError, match="at least one"):
        game_batch.concatenate([])


@pytest.mark.parametrize(
    ("south", "north", "expected"),
    [
        ("random", "greedy", True),
        (engine.make_strategy("greedy"), " random ", True),
        (Uniform(), LowestBatch(), True),
        ("random", "alphabeta(depth=2)", True),  # every engine strategy but mcts has a policy table
        ("perfect(epsilon=0.1)", "heuristic", True),
        ("mcts(playouts=10)", "random", True),  # mcts by engine.play.mcts
        ("random", "mcts(playouts=10)", True),
        ("mcts(playouts=10)", Uniform(), False),  # but not against a BatchStrategy
        (Lowest(), "random", False),  # a table strategy of its own: play_batch plays only the engine's
    ],
)
def test_batchable_says_which_pairings_play_batch_plays(south, north, expected):
    assert batched.batchable(south, north) is expected
    assert batched.batchable(south, north, Rules(stones_per_pit=3)) is expected


def test_batchable_is_what_play_batch_does(default_tables):
    pairs = [
        ("greedy", "random"),
        ("random", "heuristic"),
        ("mcts(playouts=2)", "random"),
        ("mcts(playouts=2)", LowestBatch()),
        (Lowest(), "greedy"),
        (LowestBatch(), "random"),
    ]
    for south, north in pairs:
        try:
            play_batch(5, south, north, tables=default_tables)
        except ValueError as error:
            assert "no batched version" in str(error)
            assert not batched.batchable(south, north)
        else:
            assert batched.batchable(south, north)


def test_batchable_raises_on_mistakes_rather_than_answering_no():
    with pytest.raises(UnknownStrategyError, match="'minimax'"):
        batched.batchable("minimax", "random")
    with pytest.raises(UnknownStrategyError, match="bad parameters"):
        batched.batchable("random", "alphabeta(depth=0)")
    with pytest.raises(TypeError, match="spec must be"):
        batched.batchable(42, "random")
    with pytest.raises(TypeError, match="rules must be"):
        batched.batchable("random", "random", "modiar")
