"""Is it a good game: the exact quality of each self-play pairing of a study's table strategies.

A study with exact outcomes (exact.parquet) gets, in its report, engine.exact_quality of every
table strategy against itself under the study's own rule set: how often the lead changes
hands, how often the side behind comes back, when the game is decided, how many stones each
side gives away, how often a move matters (docs/quality.md). Each is taken from the cache
folder's ``exact/`` or computed there (pipeline.exact.quality), the missing ones by workers at
once, as many as memory holds; like the exploitabilities (pipeline.study.report.exploits) they
depend on the strategies and the rules alone, not on any game played.
"""

from __future__ import annotations

import os

import polars as pl
from joblib import Parallel, delayed

import engine
from engine.exact import MEASURES
from pipeline.analysis.agreement import first_games
from pipeline.analysis.calibration_ludii import calibration_table, per_game_metrics, rank_agreement
from pipeline.exact.cache import exact_jobs
from pipeline.exact.quality import cached_exact_quality, quality_seconds, read_cached_quality
from pipeline.runs.costs import COSTS
from pipeline.runs.progress import makespan
from pipeline.runs.records import Manifest
from pipeline.study.config import parse_study

# Ludii's metrics measured against the exact values (pipeline.analysis.calibration_ludii) on the
# first games of each table strategy's self-play, with Monte Carlo at a few playouts a state.
CALIBRATION_GAMES = 1_000
CALIBRATION_PLAYOUTS = 16
CALIBRATION_SEED = 51
CALIBRATION_LEAST = 2  # strategies Ludii's metrics are ranked over: fewer, and the report gives none
# The skills whose forecast by ply the report draws: a beginner, two strong players who err.
SKILLS = ("random", "perfect(temperature=1.0)", "perfect(epsilon=0.1)")
CURVE_COLUMNS = (
    "strategy",
    "ply",
    "in_play",
    "mean_forecast",
    "forecast_sd",
    "south_ahead",
    "north_ahead",
    "stones_lost",
    "mistakes",
)


def forecast_strategies(curves: pl.DataFrame) -> list[str]:
    """The strategies whose forecast by ply the report draws: those of SKILLS the study has, else all."""
    present = curves["strategy"].unique(maintain_order=True).to_list()
    return [name for name in SKILLS if name in present] or present


def judged(manifest: Manifest) -> tuple[engine.Rules, list[str]]:
    """The rule set and the strategies whose self-play quality the report gives: the table
    strategies of the study's own rule set, in its order; none without exact outcomes."""
    study = parse_study(manifest["config"])
    if "exact" not in manifest:
        return study.rules, []
    return study.rules, [name for name in study.strategies if engine.is_table_strategy(name)]


def pending_seconds(manifest: Manifest) -> float:
    """About how long the report's judging takes (for its progress): the self-play qualities
    not yet cached, over the workers that share them (a dial's, the longest, runs on one), and
    Ludii's metrics, which are not cached."""
    rules, names = judged(manifest)
    missing = _missing(rules, [engine.canonical_spec(name) for name in names])
    judging = makespan([quality_seconds(spec, spec) for spec in missing], _jobs(rules, len(missing)))
    return judging + (COSTS.report_calibration_seconds_per_strategy * len(names) if len(names) >= CALIBRATION_LEAST else 0.0)


def qualities(manifest: Manifest) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Per strategy of ``judged``: its self-play's exact quality (rules, strategy, each of
    MEASURES, south_win, draw, north_win, unresolved) and its curves by ply (CURVE_COLUMNS,
    engine.ExactQuality.frame); None for none."""
    rules, names = judged(manifest)
    if not names:
        return None
    specs = [engine.canonical_spec(name) for name in names]
    missing = _missing(rules, specs)
    if len(missing) > 1:
        Parallel(n_jobs=_jobs(rules, len(missing)))(delayed(cached_exact_quality)(spec, spec, rules) for spec in missing)
    rows, curves = [], []
    for name, spec in zip(names, specs, strict=True):
        found = cached_exact_quality(spec, spec, rules)
        rows.append(
            {"rules": rules.name, "strategy": name, **found.as_dict(), "south_win": found.south_win, "draw": found.draw}
            | {"north_win": found.north_win, "unresolved": found.unresolved}
        )
        curves.append(found.frame().with_columns(pl.lit(name).alias("strategy")).select(CURVE_COLUMNS))
    table = pl.DataFrame(rows).select("rules", "strategy", *MEASURES, "south_win", "draw", "north_win", "unresolved")
    return table, pl.concat(curves)


def _missing(rules: engine.Rules, specs: list[str]) -> list[str]:
    """The specs whose self-play quality is not cached, the longest first."""
    missing = {spec for spec in specs if read_cached_quality(spec, spec, rules) is None}
    return sorted(missing, key=lambda spec: -quality_seconds(spec, spec))


def _jobs(rules: engine.Rules, count: int) -> int:
    return max(1, min(count, exact_jobs(os.cpu_count() or 1, [rules])))


def calibration(games: pl.LazyFrame, manifest: Manifest) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Ludii's metrics of the first CALIBRATION_GAMES self-play games of each table strategy of
    the study's rule set, from the exact forecast and from Ludii's estimates (its default heuristic
    through tanh, Monte Carlo at CALIBRATION_PLAYOUTS playouts): calibration_table's rows and the
    rank agreement (Spearman) with the exact values over the strategies; None without exact outcomes."""
    rules, names = judged(manifest)
    if len(names) < CALIBRATION_LEAST:
        return None
    self_play = games.filter(
        (pl.col("rules") == rules.name) & (pl.col("south") == pl.col("north")) & pl.col("south").is_in(names)
    )
    kept = first_games(self_play, CALIBRATION_GAMES)["game_id"]
    if not len(kept):
        return None
    sample = self_play.filter(pl.col("game_id").is_in(kept.implode())).collect()
    per_game = per_game_metrics(
        sample, engine.solve(rules, progress=False), playouts=(CALIBRATION_PLAYOUTS,), seed=CALIBRATION_SEED
    )
    table = calibration_table(per_game)
    return table, rank_agreement(table)
