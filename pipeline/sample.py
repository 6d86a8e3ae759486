"""A quick seeded sample of games and its summary, printed: ``modiar sample``.

Game i of a sample with seed s is ``engine.play_game(south, north, rules=rules,
seed=engine.game.game_seeds(s, n)[i])``; the per-game seeds come up front from NumPy's
``SeedSequence``, so a sample is the same whoever plays it and in whatever order.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import engine
from engine.game import game_seeds
from pipeline.analysis.stats import Estimate, first_player, game_rate, mean_interval, wilson
from pipeline.report.prose import p_words

CHUNK = 1000


@dataclass(frozen=True)
class Sample:
    """The columns of the games of a sample, one entry per game."""

    south: str
    north: str
    rules: engine.Rules
    seed: int
    winner: np.ndarray  # "south", "north", "draw"
    score_south: np.ndarray
    score_north: np.ndarray
    plies: np.ndarray
    ply_capped: np.ndarray  # bool
    events: dict[str, np.ndarray]

    @property
    def games(self) -> int:
        return len(self.plies)


def play_sample(
    south: str, north: str, *, games: int, seed: int, rules: engine.Rules | None = None, progress: bool = True
) -> Sample:
    rules = rules or engine.Rules()
    # Resolve the specs once, so that a bad one fails before any game is played.
    engine.make_strategy(south), engine.make_strategy(north)
    seeds = game_seeds(seed, games).tolist()
    records: list[engine.GameRecord] = []
    bar = tqdm(total=games, unit="game", disable=not progress, file=sys.stderr, leave=False)
    for start in range(0, games, CHUNK):
        chunk = seeds[start : start + CHUNK]
        records.extend(engine.play_game(south, north, rules=rules, seed=game_seed) for game_seed in chunk)
        bar.update(len(chunk))
    bar.close()
    return Sample(
        south,
        north,
        rules,
        seed,
        np.array([record.winner for record in records]),
        np.array([record.score_south for record in records]),
        np.array([record.score_north for record in records]),
        np.array([record.plies for record in records]),
        np.array([record.end_reason == "ply_cap" for record in records]),
        {name: np.array([record.events[name] for record in records]) for name in engine.EVENTS},
    )


def summary(sample: Sample) -> str:
    n = sample.games
    lines = [
        f"{n:,} games: {sample.south} (South) against {sample.north} (North), rules {sample.rules.name}, seed {sample.seed}",
        "",
        f"{'result':<28}{'share [95% Wilson interval]':>34}",
    ]
    for label, side in (("South wins", "south"), ("draws", "draw"), ("North wins", "north")):
        lines.append(f"{label:<28}{wilson(int((sample.winner == side).sum()), n).percent():>34}")
    south, draw, north = (np.array([(sample.winner == side).sum()]) for side in ("south", "draw", "north"))
    first = first_player(south, draw, north)
    score = Estimate(float(first.score[0]), float(first.low[0]), float(first.high[0]))
    lines += [
        f"{'first-player score':<28}{score.plain():>34}   (South's, a draw counting 1/2; exact interval;"
        f" sign test against 1/2 on decisive games: p {p_words(float(first.p[0]))})",
        "",
        f"game length: mean {mean_interval(sample.plies).plain(2)} plies, median {np.median(sample.plies):.0f},"
        f" p90 {np.percentile(sample.plies, 90):.0f}, max {sample.plies.max()};"
        f" {int(sample.ply_capped.sum())} games reached the ply cap of {sample.rules.ply_cap}",
        "",
        f"{'rule event':<30}{'games where it fires':>30}{'mean per game':>26}{'per 100 turns':>16}",
    ]
    turns = int(sample.plies.sum())
    for name, counts in sample.events.items():
        fired = wilson(int((counts > 0).sum()), n)
        per_turn = 100 * counts.sum() / turns if turns else 0.0
        lines.append(f"{name:<30}{fired.percent():>30}{game_rate(counts).plain(3):>26}{per_turn:>16.3f}")
    return "\n".join(lines)
