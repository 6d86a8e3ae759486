"""pipeline.analysis.coverage: the report's intervals hold the exact value about 95% of the time in small
pairings with rare events, where the normal intervals they replaced do not.

With 4 stones a pit, random against random, feeding and the grand-slam end are rare (2% to 9%
of games) and the exact outcome takes a second; 2,000 seeded pairings of 30 games each.
"""

from __future__ import annotations

import polars as pl
import pytest

import engine
from pipeline.analysis.coverage import coverage

RULES = engine.Rules(stones_per_pit=4)


@pytest.fixture(scope="module")
def measured() -> pl.DataFrame:
    outcome = engine.exact_outcome("random", "random", rules=RULES)
    exact = {"first_player_score": outcome.first_player_score, "mean_plies": outcome.mean_plies}
    exact |= {f"fires_{name}": value for name, value in outcome.event_fires.items()}
    exact |= {f"mean_{name}": value for name, value in outcome.event_mean.items()}
    return coverage("random", "random", exact, rules=RULES, games=30, replications=2000, seed=1)


def test_the_reports_intervals_cover(measured):
    ours = measured.filter(pl.col("interval") == "report")
    # Wilson-type intervals dip below 95% at some true shares (Brown, Cai and DasGupta 2001): 90% at worst here
    assert ours["coverage"].min() >= 0.90, ours.sort("coverage").head(3)
    assert ours["coverage"].mean() >= 0.94


def test_the_normal_intervals_of_rare_events_do_not(measured):
    # feeding forced a move in 2.4% of games: most pairings of 30 games see it never or once,
    # and a normal interval around a count of 0 is [0, 0]
    normal = measured.filter((pl.col("interval") == "normal") & pl.col("figure").str.starts_with("feeding_forced"))
    assert normal["coverage"].max() < 0.6
    ours = measured.filter((pl.col("interval") == "report") & pl.col("figure").str.starts_with("feeding_forced"))
    assert ours["coverage"].min() > 0.95


def test_the_first_players_interval_covers_with_lopsided_results():
    # 3 stones a pit: South wins no game against random play, draws a sixth; the score is 1/12
    outcome = engine.exact_outcome("random", "random", rules=engine.Rules(stones_per_pit=3))
    exact = {"first_player_score": outcome.first_player_score, "mean_plies": outcome.mean_plies}
    table = coverage("random", "random", exact, rules=engine.Rules(stones_per_pit=3), names=(), seed=2)
    assert table.filter(pl.col("interval") == "report")["coverage"].item() >= 0.95


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="at least 2 games"):
        coverage("random", "random", {}, rules=RULES, games=1)
