"""pipeline.analysis.metrics: every number against pandas and pipeline.analysis.stats, and the definitions on known games."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from intervals import score_rate, sign_test

import engine
from pipeline.analysis.metrics import events, ludii, outcomes
from pipeline.analysis.stats import Z95, wilson
from pipeline.cli import main
from pipeline.runs.records import read_games, scan_games

EXACT = {"rel": 1e-9, "abs": 1e-12}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("metrics")
    config = folder / "tiny.toml"
    config.write_text('name = "tiny"\nseed = 5\ngames_per_seat = 400\nstrategies = ["random", "greedy"]\n')
    assert main(["study", "run", str(config), "--out", str(folder / "tiny"), "--quiet"]) == 0
    return folder / "tiny"


def _groups(games, row, by):
    mask = np.ones(len(games), dtype=bool)
    for column in by:
        mask &= (games[column] == row[column]).to_numpy()
    return games[mask]


def _close(found, expected):
    assert found == pytest.approx(tuple(expected), **EXACT)


@pytest.mark.parametrize("by", [("south", "north"), ()])
def test_outcomes_match_pandas_and_stats(study, by):
    games = read_games(study)
    table = outcomes(scan_games(study), by=by)
    assert len(table) == (4 if by else 1)
    assert table["games"].sum() == len(games) == 1600
    for row in table.iter_rows(named=True):
        group = _groups(games, row, by)
        n = len(group)
        south, draws, north = (int((group.winner == side).sum()) for side in ("south", "draw", "north"))
        assert (row["games"], row["south_wins"], row["draws"], row["north_wins"]) == (n, south, draws, north)
        for name, count in (("south", south), ("draw", draws), ("north", north)):
            _close((row[f"{name}_share"], row[f"{name}_low"], row[f"{name}_high"]), wilson(count, n))
        found = (row["first_player_score"], row["first_player_low"], row["first_player_high"], row["first_player_p"])
        _close(found, sign_test(south, draws, north))


@pytest.mark.parametrize("by", [("south", "north"), ()])
def test_ludii_metrics_match_pandas(study, by):
    games = read_games(study)
    table = ludii(scan_games(study), by=by)
    assert len(table) == (4 if by else 1)
    for row in table.iter_rows(named=True):
        group = _groups(games, row, by)
        n = len(group)
        south, draw, north = ((group.winner == side).sum() / n for side in ("south", "draw", "north"))
        timeouts = (group.end_reason == "ply_cap").sum() / n
        complete = ((group.end_reason == "no_moves") & (group.winner != "draw")).sum() / n
        plies = group.plies.astype(float)
        expected = (n, south + draw / 2, 1 - abs(south - north), complete, draw, timeouts)
        found = tuple(row[key] for key in ("games", "AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts"))
        _close(found, expected)
        _close(
            (row["Duration"], row["Duration_median"], row["Duration_p90"], row["Duration_max"]),
            (plies.mean(), plies.median(), plies.quantile(0.9), plies.max()),
        )


def test_ludii_lengths_are_those_of_polars_over_every_game(study):
    """To the bit: the spread and quantiles are read without the key strings, from the same games in the same order."""
    plies = pl.col("plies").cast(pl.Float64)
    expected = (
        scan_games(study)
        .group_by("south", "north")
        .agg(
            plies.mean().alias("Duration"),
            plies.std(ddof=1).alias("sd"),
            plies.median().alias("Duration_median"),
            plies.quantile(0.9, interpolation="linear").alias("Duration_p90"),
            plies.quantile(0.99, interpolation="linear").alias("Duration_p99"),
            pl.len().alias("games"),
        )
        .sort("south", "north")
        .collect(engine="in-memory")
    )
    low = pl.col("Duration") - Z95 * pl.col("sd") / pl.col("games").cast(pl.Float64).sqrt()
    expected = expected.select("south", "north", low.alias("Duration_low"), "Duration_median", "Duration_p90", "Duration_p99")
    assert ludii(scan_games(study)).select(expected.columns).equals(expected)


@pytest.mark.parametrize("by", [("south", "north"), ()])
def test_events_match_pandas_and_stats(study, by):
    games = read_games(study)
    table = events(scan_games(study), by=by)
    assert len(table) == (4 if by else 1) * len(engine.EVENTS)
    assert table["event"].unique(maintain_order=True).to_list() == list(engine.EVENTS)
    for row in table.iter_rows(named=True):
        group = _groups(games, row, by)
        n, turns = len(group), int(group.plies.astype(int).sum())
        counts = group[row["event"]].to_numpy(dtype=float)
        fired = int((counts > 0).sum())
        assert (row["games"], row["turns"], row["fired"], row["total"]) == (n, turns, fired, int(counts.sum()))
        _close((row["fired_share"], row["fired_low"], row["fired_high"]), wilson(fired, n))
        # the closed form sums squares over games, the reference finds roots: agreement to 1e-8
        found = (row["mean"], row["mean_low"], row["mean_high"])
        assert found == pytest.approx(score_rate(counts, np.ones(n)), rel=1e-8)
        per_turn = tuple(100 * x for x in score_rate(counts, group.plies.to_numpy(float)))
        assert (row["per_100_turns"], row["per_100_turns_low"], row["per_100_turns_high"]) == pytest.approx(per_turn, rel=1e-8)


def _known_games() -> pl.LazyFrame:
    # 3 South wins, 1 draw, 1 North win; the draw and one South win stop at the ply cap.
    winners = ["south", "south", "draw", "south", "north"]
    return pl.LazyFrame(
        {
            "south": ["a"] * 5,
            "north": ["b"] * 5,
            "winner": winners,
            "end_reason": ["no_moves", "ply_cap", "ply_cap", "no_moves", "no_moves"],
            "plies": pl.Series([10, 20, 30, 40, 100], dtype=pl.Int16),
            **{name: pl.Series([0, 0, 1, 2, 3], dtype=pl.UInt16) for name in engine.EVENTS},
        }
    )


def test_ludii_definitions_on_known_games():
    row = ludii(_known_games()).row(0, named=True)
    assert (row["south"], row["north"], row["games"]) == ("a", "b", 5)
    assert row["AdvantageP1"] == pytest.approx(0.7)
    assert row["Balance"] == pytest.approx(1 - abs(0.6 - 0.2))
    assert row["Drawishness"] == pytest.approx(0.2)
    assert row["Timeouts"] == pytest.approx(0.4)
    assert row["Completion"] == pytest.approx(0.6)
    assert (row["Duration"], row["Duration_median"], row["Duration_max"]) == (40.0, 30.0, 100)
    assert row["Duration_p90"] == pytest.approx(40 + 0.6 * 60)  # linear: between the 4th and 5th of 5
    assert ludii(_known_games(), by=()).row(0, named=True)["AdvantageP1"] == pytest.approx(0.7)


def test_outcomes_and_events_on_known_games():
    row = outcomes(_known_games(), by=()).row(0, named=True)
    assert (row["games"], row["south_wins"], row["draws"], row["north_wins"]) == (5, 3, 1, 1)
    assert row["first_player_score"] == pytest.approx(0.7)
    assert row["first_player_p"] == pytest.approx(0.625)  # 3 of 4 decisive games: 2 * P(X >= 3) = 2 * 5/16
    table = events(_known_games(), by=())
    assert len(table) == len(engine.EVENTS)
    first = table.row(0, named=True)
    assert (first["event"], first["turns"], first["fired"], first["total"]) == (engine.EVENTS[0], 200, 3, 6)
    assert first["fired_share"] == pytest.approx(0.6)
    assert first["mean"] == pytest.approx(1.2)
    assert first["per_100_turns"] == pytest.approx(3.0)


def test_every_draw_gives_p_one_and_wilson_bounds_match_published_values():
    draws = pl.LazyFrame({"south": ["a"] * 4, "north": ["b"] * 4, "winner": ["draw"] * 4})
    row = outcomes(draws).row(0, named=True)
    assert row["first_player_score"] == 0.5 and row["first_player_p"] == 1.0
    # Newcombe (1998), Statistics in Medicine 17:857, table I: 0/10 -> [0, 0.2775], 5/10 -> [0.2366, 0.7634].
    tens = pl.LazyFrame({"south": ["a"] * 10, "north": ["b"] * 10, "winner": ["north"] * 5 + ["south"] * 5})
    row = outcomes(tens, by=()).row(0, named=True)
    assert (round(row["draw_low"], 4), round(row["draw_high"], 4)) == (0.0, 0.2775)
    assert (round(row["south_low"], 4), round(row["south_high"], 4)) == (0.2366, 0.7634)


def test_completion_is_ludiis_games_with_a_winner_before_the_cap():
    # A draw that ends before the cap is no more complete than a game stopped by the cap.
    games = _known_games().with_columns(pl.Series("end_reason", ["no_moves"] * 5))
    row = ludii(games).row(0, named=True)
    assert (row["Completion"], row["Drawishness"], row["Timeouts"]) == pytest.approx((0.8, 0.2, 0.0))
