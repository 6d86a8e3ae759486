"""Benchmarks that print their figures: ``make bench`` / ``modiar bench``.

Speed targets are checked here, never by timed unit tests. Figures from one run are
compared with each other (ratios), since the machine is shared and noisy.
"""

from __future__ import annotations

import os
import platform
import resource
import time
from dataclasses import dataclass

import engine
from engine.positions import positions

PERFT_DEPTH = 14


@dataclass(frozen=True)
class Throughput:
    games: int
    moves: int
    seconds: float

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def moves_per_second(self) -> float:
        return self.moves / self.seconds


def random_games(seconds: float, *, rules: engine.Rules | None = None, first_seed: int = 0) -> Throughput:
    """Play uniformly random complete games through ``engine.play_game`` for ``seconds``."""
    rules = rules or engine.Rules()
    games = moves = 0
    seed = first_seed
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(1000):
            moves += engine.play_game("random", "random", rules=rules, seed=seed).plies
            seed += 1
        games += 1000
        now = time.perf_counter()
        if now >= deadline:
            return Throughput(games, moves, now - start)


def perft_time(depth: int) -> tuple[int, float]:
    start = time.perf_counter()
    count = engine.perft(depth)
    return count, time.perf_counter() - start


def main(seconds: float = 10.0) -> None:
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"engine {engine.ENGINE_VERSION}, rules {engine.Rules().name}")
    print(f"\nrandom games through engine.play_game, one process, {seconds:.0f} s from a cold start (target >= 20,000 games/s):")
    cold = random_games(seconds)
    _print_throughput("cold", cold)
    warm = random_games(seconds, first_seed=cold.games)
    _print_throughput("warm", warm)
    again = random_games(seconds / 2, first_seed=0)
    _print_throughput("replay", again, "(the cold run's seeds again: every position known)")
    verdict = "meets" if cold.games_per_second >= 20_000 else "MISSES"
    print(f"  cold run {verdict} the 20,000 games/s target")
    memo = positions(engine.Rules())
    print(f"  positions memoised: {len(memo.later):,}")
    count, took = perft_time(PERFT_DEPTH)
    print(f"\nperft({PERFT_DEPTH}) = {count:,} in {took:.2f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak:,.0f} MiB")


def _print_throughput(label: str, result: Throughput, note: str = "") -> None:
    print(
        f"  {label:>6}: {result.games:>9,} games in {result.seconds:5.2f} s = {result.games_per_second:>8,.0f} games/s,"
        f" {result.moves_per_second:>10,.0f} moves/s, {result.moves / result.games:.1f} plies/game {note}"
    )


if __name__ == "__main__":
    main()
