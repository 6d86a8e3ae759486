"""pipeline.analysis.turns: per-ply metrics of a tiny two-rule-set study against the scalar engine and the games table."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import engine
from engine.solver.solution import cached_solution
from engine.tables import turned_ranks
from engine.tables.index import board_index, counts_to_codes
from pipeline.analysis import agreement as agreement_module
from pipeline.analysis import turns
from pipeline.analysis.agreement import AGREEMENT_COLUMNS, agreement, first_games
from pipeline.analysis.stats import Z95, mean_interval, wilson
from pipeline.analysis.turns import (
    END_EVENTS,
    LUDII_COLUMNS,
    LUDII_PLIES,
    TURN_FLAGS,
    Plies,
    events_by_ply,
    ludii_plies,
    ply_tables,
    replay_games,
)
from pipeline.cli import main
from pipeline.runs.records import scan_games

EXACT = {"rel": 1e-9, "abs": 1e-12}
KEYS = ["rules", "south", "north"]
BASE = engine.Rules(stones_per_pit=3, ply_cap=20)  # tiny tables, solved in well under a second
CONFIG = """name = "tiny"
seed = 5
games_per_seat = 40
strategies = ["random", "greedy", "perfect"]

[rules]
stones_per_pit = 3
ply_cap = 20

[variants.feedingoff]
rules = { feeding = false }
strategies = ["random", "greedy"]
"""
# A game of stones 3 with captures of 6 only, whose state after ply 15 repeats that after ply 7
# (board 1 1 2 / 2 5 1, North to move): 18 moves, 19 states, 18 distinct. It ends with South's
# row all singletons.
CYCLE_RULES = engine.Rules(stones_per_pit=3, capture_counts=(6,), ply_cap=30)
CYCLE_MOVES = [1, 5, 1, 3, 2, 5, 1, 4, 0, 5, 0, 3, 2, 3, 1, 3, 2, 3]
CYCLE_OPTIONS = [3, 3, 3, 2, 2, 3, 1, 2, 3, 2, 3, 1, 2, 2, 1, 2, 1, 1]
# A game of the same rules whose board after ply 5 (North to move) comes back after ply 14 (South
# to move): 16 moves, 17 states, all distinct, but 16 distinct boards. It ends with South's row
# all singletons.
#
#   after ply 5, North to move      after ply 14, South to move
#          5  4  3                         5  4  3
#   North [5  1  2]                 North [5  1  2]
#   South [1  1  2]                 South [1  1  2]
#          0  1  2                         0  1  2
CROSS_MOVES = [0, 3, 2, 3, 1, 5, 2, 4, 0, 3, 0, 4, 1, 4, 2, 3]
CROSS_OPTIONS = [3, 3, 2, 3, 1, 2, 3, 2, 2, 2, 2, 2, 1, 3, 1, 2]
# A game of the same rules without a repeated board: 5 moves, 6 boards.
PLAIN_MOVES = [1, 4, 0, 5, 1]
PLAIN_OPTIONS = [3, 3, 2, 2, 2]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("turns")
    config = folder / "tiny.toml"
    config.write_text(CONFIG)
    assert main(["study", "run", str(config), "--out", str(folder / "tiny"), "--quiet"]) == 0
    return folder / "tiny"


@pytest.fixture(scope="module")
def games(study) -> pl.DataFrame:
    return scan_games(study).collect().sort("game_id")


@pytest.fixture(scope="module")
def plies(study) -> Plies:
    return replay_games(scan_games(study), by=KEYS)


def _reference(rules: engine.Rules, moves: list[int]) -> dict[str, float]:
    """The Ludii metrics of one game with a move, straight from engine.legal_moves and
    engine.apply_move, and the sums of the per-turn mean: _legal (legal moves) and _plies."""
    board, options, states = engine.start_board(rules), [], [(engine.start_board(rules), 0)]
    for ply, pit in enumerate(moves):
        options.append(len(engine.legal_moves(board, ply % 2, ply, rules)))
        board = engine.apply_move(board, ply % 2, pit, ply, rules).board
        states.append((board, (ply + 1) % 2))
    boards = [board for board, _ in states]
    return {
        "BranchingFactor": sum(options) / len(options),
        "DecisionMoves": sum(n > 1 for n in options) / len(options),
        "PositionalRepetition": 1 - len(set(states)) / len(states),
        "BranchingFactor_per_game": sum(options) / len(options),
        "PositionalRepetition_ludii": float(len(set(boards)) < len(boards)),  # Java: 1.0 - (int / int)
        "_legal": sum(options),
        "_plies": len(options),
    }


def _per_turn(reference: list[dict[str, float]]) -> tuple[float, float, float]:
    """The pooled legal moves per turn with its delta-method interval, from each game's residual
    x - r t (x its legal moves, t its turns)."""
    legal = np.array([game["_legal"] for game in reference])
    turns = np.array([game["_plies"] for game in reference])
    ratio = legal.sum() / turns.sum()
    n = len(reference)
    half = Z95 * np.sqrt(((legal - ratio * turns) ** 2).sum() / (n - 1) / n) / turns.mean() if n > 1 else 0.0
    return ratio, ratio - half, ratio + half


def _hand_built(moves: list[list[int]], rules: engine.Rules = CYCLE_RULES) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "rules": [rules.name] * len(moves),
            "game_id": list(range(len(moves))),
            "south": ["a"] * len(moves),
            "north": ["b"] * len(moves),
            "plies": [len(m) for m in moves],
            "moves": pl.Series(moves, dtype=pl.List(pl.UInt8)),
        }
    )


def test_the_study_holds_two_rule_sets(plies, games):
    assert sorted(games["rules"].unique()) == sorted([BASE.name, BASE.replace(feeding=False).name])
    assert len(plies.replays) == 2 and len(plies) == len(games)
    assert int(plies.offsets[-1]) == int(games["plies"].cast(pl.Int64).sum())


def test_the_frame_of_plies_is_the_moves_of_the_games(plies, games):
    frame = plies.frame()
    assert frame.height == int(plies.offsets[-1])
    assert frame.columns == [
        "game_id", "rules", "south", "north", "ply", "mover", "strategy", "pit",
        "position", "options", "captured", *TURN_FLAGS,
    ]  # fmt: skip
    recorded = dict(zip(games["game_id"].to_list(), games["moves"].to_list(), strict=True))
    assert frame["pit"].to_list() == [pit for game_id in plies.games["game_id"].to_list() for pit in recorded[game_id]]
    assert (frame["mover"] == frame["ply"] % 2).all()
    seat = frame.select(pl.when(pl.col("mover") == 0).then(pl.col("south")).otherwise(pl.col("north")).cast(pl.String))
    assert seat.to_series().to_list() == frame["strategy"].cast(pl.String).to_list()


def test_ludii_plies_match_the_scalar_engine(plies, games):
    table = ludii_plies(plies, by=KEYS)
    assert table.height == 9 + 4 and table["games"].sum() == len(games)
    for row in table.iter_rows(named=True):
        group = games.filter(
            (pl.col("rules") == row["rules"]) & (pl.col("south") == row["south"]) & (pl.col("north") == row["north"])
        )
        rules = engine.Rules.from_name(row["rules"])
        reference = [_reference(rules, moves) for moves in group["moves"].to_list()]
        assert row["games"] == len(group)
        for name in (*LUDII_PLIES, "BranchingFactor_per_game"):
            expected = mean_interval(np.array([game[name] for game in reference]))
            assert (row[name], row[f"{name}_low"], row[f"{name}_high"]) == pytest.approx(tuple(expected), **EXACT)
        repeated = wilson(sum(game["PositionalRepetition_ludii"] for game in reference), len(reference))
        found = (row["PositionalRepetition_ludii"], row["PositionalRepetition_ludii_low"], row["PositionalRepetition_ludii_high"])
        assert found == pytest.approx(tuple(repeated), **EXACT)
        found = (row["BranchingFactor_per_turn"], row["BranchingFactor_per_turn_low"], row["BranchingFactor_per_turn_high"])
        assert found == pytest.approx(_per_turn(reference), **EXACT)


def test_ludii_plies_columns(plies):
    table = ludii_plies(plies, by=KEYS)
    assert table.columns == [*KEYS, "games", *(f"{name}{end}" for name in LUDII_COLUMNS for end in ("", "_low", "_high"))]


def test_ludii_plies_on_a_hand_built_game_with_a_repeated_state():
    assert _reference(CYCLE_RULES, CYCLE_MOVES)["PositionalRepetition"] == pytest.approx(1 / 19)
    row = ludii_plies(_hand_built([CYCLE_MOVES]), by=()).row(0, named=True)
    assert row["games"] == 1
    assert row["BranchingFactor"] == pytest.approx(sum(CYCLE_OPTIONS) / 18) == pytest.approx(37 / 18)
    assert row["DecisionMoves"] == pytest.approx(13 / 18)
    assert row["PositionalRepetition"] == pytest.approx(1 / 19)
    assert row["PositionalRepetition_low"] == row["PositionalRepetition_high"] == row["PositionalRepetition"]
    assert row["PositionalRepetition_ludii"] == 1.0  # Java's 1.0 - (18 / 19) in ints is 1.0 - 0
    plies = replay_games(_hand_built([CYCLE_MOVES]))
    assert plies.column("options").tolist() == CYCLE_OPTIONS
    assert plies.per_game("end_code").tolist() == [1]  # singleton_end


def test_a_game_without_moves_has_no_branching_factor_of_ours_and_0_of_ludiis():
    two = ludii_plies(_hand_built([CYCLE_MOVES, []]), by=()).row(0, named=True)
    assert two["games"] == 2 and two["BranchingFactor"] == pytest.approx(37 / 18)
    assert two["PositionalRepetition"] == pytest.approx((1 / 19 + 0) / 2)
    assert two["BranchingFactor_per_game"] == pytest.approx((37 / 18 + 0) / 2)  # MultiMetricFramework.metricAverage
    assert two["BranchingFactor_per_turn"] == pytest.approx(37 / 18)
    assert two["PositionalRepetition_ludii"] == pytest.approx(1 / 2)


def test_ludiis_literal_metrics_on_hand_built_games():
    assert sum(CROSS_OPTIONS) == 34 and sum(PLAIN_OPTIONS) == 12
    games = [CYCLE_MOVES, CROSS_MOVES, PLAIN_MOVES]
    assert [_reference(CYCLE_RULES, moves)["PositionalRepetition_ludii"] for moves in games] == [1.0, 1.0, 0.0]
    assert _reference(CYCLE_RULES, CROSS_MOVES)["PositionalRepetition"] == 0.0  # (board, side to move) never repeats
    row = ludii_plies(_hand_built([*games, []]), by=()).row(0, named=True)
    assert row["games"] == 4
    assert row["BranchingFactor"] == pytest.approx((37 / 18 + 34 / 16 + 12 / 5) / 3)  # the game without moves left out
    assert row["BranchingFactor_per_game"] == pytest.approx((37 / 18 + 34 / 16 + 12 / 5 + 0) / 4)  # counted as 0
    assert row["BranchingFactor_per_turn"] == pytest.approx((37 + 34 + 12) / (18 + 16 + 5))
    assert row["DecisionMoves"] == pytest.approx((13 / 18 + 13 / 16 + 5 / 5) / 3)
    assert row["PositionalRepetition"] == pytest.approx((1 / 19 + 0 + 0 + 0) / 4)
    assert row["PositionalRepetition_ludii"] == pytest.approx(2 / 4)
    assert (row["PositionalRepetition_ludii_low"], row["PositionalRepetition_ludii_high"]) == pytest.approx(wilson(2, 4)[1:])
    plies = replay_games(_hand_built([CROSS_MOVES, PLAIN_MOVES]))
    assert plies.column("options").tolist() == CROSS_OPTIONS + PLAIN_OPTIONS


@pytest.mark.parametrize("stones", [3, 7])
def test_rotated_turns_the_boards_as_engine_rotate(stones):
    total = 6 * stones
    index = board_index(total)
    counts = np.random.default_rng(stones).multinomial(total, [1 / 7] * 7, size=2_000)[:, :6]  # the 7th: stones taken
    counts[:3] = [[0] * 6, [total, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, total]]
    turned = [engine.rotate(int(code)) for code in counts_to_codes(counts)]
    found = turned_ranks(index, index.rank_counts(counts))
    assert found.tolist() == index.rank_codes(np.array(turned, dtype=np.uint64)).tolist()


def test_events_by_ply_totals_are_the_games_table_totals(plies, games):
    table = events_by_ply(plies, by=KEYS)
    assert table["event"].unique(maintain_order=True).to_list() == [*TURN_FLAGS, *END_EVENTS]
    totals = table.group_by(*KEYS, "event").agg(pl.col("fired").sum())
    expected = games.group_by(*KEYS).agg(pl.col(name).cast(pl.Int64).sum() for name in (*TURN_FLAGS, *END_EVENTS))
    for row in totals.iter_rows(named=True):
        match = expected.filter(
            (pl.col("rules") == row["rules"]) & (pl.col("south") == row["south"]) & (pl.col("north") == row["north"])
        )
        assert row["fired"] == match[row["event"]].item(), row


def test_events_by_ply_denominators_and_intervals(plies, games):
    table = events_by_ply(plies, by=())
    lengths = games["plies"].cast(pl.Int64).to_numpy()
    for row in table.iter_rows(named=True):
        assert row["turns"] == int((lengths > row["ply"]).sum())
        assert row["positions"] == int((lengths >= row["ply"]).sum())
        trials = row["turns"] if row["event"] in TURN_FLAGS else row["positions"]
        assert trials > 0
        expected = wilson(row["fired"], trials)
        assert (row["share"], row["share_low"], row["share_high"]) == pytest.approx(tuple(expected), **EXACT)
    capture = table.filter(pl.col("event") == "capture")
    assert capture["ply"].to_list() == list(range(int(lengths.max())))
    ended = table.filter(pl.col("event") == "singleton_end")
    assert ended["ply"].to_list() == list(range(int(lengths.max()) + 1))
    at_end = games.filter(pl.col("singleton_end") == 1)["plies"].value_counts()
    for ply, count in at_end.iter_rows():
        assert ended.filter(pl.col("ply") == ply)["fired"].item() == count


def test_agreement_perfect_keeps_the_value_and_random_loses_some(study):
    solution = engine.solve(BASE, progress=False)
    base = scan_games(study).filter(pl.col("rules") == BASE.name)
    table = agreement(base, solution, max_games_per_pairing=None)
    rows = {row["strategy"]: row for row in table.iter_rows(named=True)}
    assert sorted(rows) == ["greedy", "perfect", "random"]
    perfect, random = rows["perfect"], rows["random"]
    assert perfect["kept"] == perfect["moves"] and perfect["kept_share"] == 1.0 and perfect["loss"] == 0.0
    assert random["kept"] < random["moves"] and random["loss"] > 0 and random["loss_low"] < random["loss"] < random["loss_high"]
    assert (table["start_value"] == solution.start_value()).all() and (table["rules"] == BASE.name).all()
    games = base.collect()
    moves = {name: 0 for name in rows}
    for south, north, plies in games.select("south", "north", "plies").iter_rows():
        moves[south] += (plies + 1) // 2
        moves[north] += plies // 2
    assert {name: row["moves"] for name, row in rows.items()} == moves
    kept = wilson(random["kept"], random["moves"])
    assert (random["kept_share"], random["kept_low"], random["kept_high"]) == pytest.approx(tuple(kept), **EXACT)


def test_agreement_keeps_exactly_the_best_moves_of_the_solution(study):
    solution = engine.solve(BASE, progress=False)
    games = scan_games(study).filter((pl.col("rules") == BASE.name) & (pl.col("south") == "random")).collect()
    kept = losses = moves = 0
    for pits, north in games.select("moves", "north").iter_rows():
        board = engine.start_board(BASE)
        for ply, pit in enumerate(pits):
            if ply % 2 == 0 or north == "random":
                best = solution.best_moves(board, ply % 2, ply)
                after = engine.apply_move(board, ply % 2, pit, ply, BASE)
                worth = after.captured - solution.value(after.board, (ply + 1) % 2, ply + 1)
                value = solution.value(board, ply % 2, ply)
                assert (pit in best) == (worth == value) and worth <= value
                kept, losses, moves = kept + (pit in best), losses + value - worth, moves + 1
            board = engine.apply_move(board, ply % 2, pit, ply, BASE).board
    row = agreement(games.lazy(), solution, max_games_per_pairing=None).filter(pl.col("strategy") == "random").row(0, named=True)
    assert (row["moves"], row["kept"]) == (moves, kept)
    assert row["loss"] == pytest.approx(losses / moves, **EXACT)


def test_agreement_takes_the_first_games_of_each_pairing(study):
    solution = engine.solve(BASE, progress=False)
    base = scan_games(study).filter(pl.col("rules") == BASE.name)
    table = agreement(base, solution, max_games_per_pairing=5)
    first = base.collect().sort("game_id").group_by("south", "north", maintain_order=True).head(5)
    assert table["moves"].sum() == int(first["plies"].cast(pl.Int64).sum())
    with pytest.raises(ValueError, match="the solution is that of modiar-stones3-cap20, not of the games' rule set"):
        agreement(scan_games(study), solution, max_games_per_pairing=2)
    with pytest.raises(ValueError, match="no solution given for the rule set modiar-stones3-feedingoff-cap20"):
        agreement(scan_games(study), {BASE.name: solution}, max_games_per_pairing=2)


def test_first_games_are_the_first_of_each_pairing_by_game_id(study):
    games = scan_games(study)
    found = first_games(games, 7)
    expected = games.filter(pl.col("game_id").rank("ordinal").over(KEYS) <= 7).select(found.columns).collect()
    assert found.equals(expected)  # the games' order kept


def test_first_games_keep_each_pairings_own_when_game_ids_repeat_across_pairings():
    frame = pl.concat([_hand_built([PLAIN_MOVES] * 3).with_columns(pl.lit(south).alias("south")) for south in ("a", "b")])
    frame = frame.with_columns(pl.Series("game_id", [5, 6, 7, 1, 2, 5]))  # 5 is a's first and b's last
    assert first_games(frame, 2).select("south", "game_id").rows() == [("a", 5), ("a", 6), ("b", 1), ("b", 2)]


def test_games_replayed_block_by_block_give_the_tables_of_one_replay(study, plies, monkeypatch):
    monkeypatch.setattr(turns, "BLOCK_PLIES", 50)  # many blocks, and a rule set's games across two
    games = scan_games(study)
    assert ludii_plies(games, by=KEYS).equals(ludii_plies(plies, by=KEYS))
    assert events_by_ply(games, by=KEYS).equals(events_by_ply(plies, by=KEYS))
    assert all(a.equals(b) for a, b in zip(ply_tables(games, by=KEYS), ply_tables(plies, by=KEYS), strict=True))
    assert ludii_plies(games, by=()).equals(ludii_plies(replay_games(games), by=()))


def test_agreement_judged_block_by_block_is_the_same(study, monkeypatch):
    solution = engine.solve(BASE, progress=False)
    base = scan_games(study).filter(pl.col("rules") == BASE.name)
    whole = agreement(base, solution)
    monkeypatch.setattr(agreement_module, "AGREEMENT_PLIES", 30)  # a block every two games or so
    assert agreement(base, solution).equals(whole)


def test_agreement_per_rule_set(study):
    feeding_off = BASE.replace(feeding=False)
    solutions = {BASE.name: engine.solve(BASE, progress=False), feeding_off.name: engine.solve(feeding_off, cache=None)}
    table = agreement(scan_games(study), solutions, max_games_per_pairing=10)
    assert table.select("rules", "strategy").rows() == [
        (BASE.name, "greedy"),
        (BASE.name, "perfect"),
        (BASE.name, "random"),
        (feeding_off.name, "greedy"),
        (feeding_off.name, "random"),
    ]
    assert table.filter(pl.col("rules") == feeding_off.name)["start_value"].unique().to_list() == [
        solutions[feeding_off.name].start_value()
    ]


def test_cached_solution_never_solves(tmp_path):
    assert cached_solution(BASE, cache=tmp_path) is None
    engine.solve(BASE, progress=False)  # makes sure the shared cache holds it
    found = cached_solution(BASE)
    assert found is not None and found.rules == BASE and found.start_value() == engine.solve(BASE).start_value()


def test_an_illegal_move_names_the_game_id_and_the_ply():
    frame = _hand_built([CYCLE_MOVES, [1, 2]]).with_columns(pl.Series("game_id", [70, 71]))
    with pytest.raises(engine.IllegalMoveError, match="game_id 71, ply 1: North cannot play pit 2"):
        replay_games(frame)


def test_agreement_of_no_games_is_an_empty_table(study):
    solution = engine.solve(BASE, progress=False)
    table = agreement(scan_games(study).filter(pl.lit(False)), solution)
    assert table.height == 0 and table.columns == list(AGREEMENT_COLUMNS)
