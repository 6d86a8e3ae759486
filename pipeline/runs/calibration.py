"""Bench's measurements as entries of the cost file (pipeline/costs.toml): which entries a run of
``modiar bench`` measures (WRITTEN: those the file's comments mark "bench:"), how each is made
from its lines' figures, and the report of them, beside the file's, that ends a run (and, asked,
rewrites them: pipeline.runs.costs.rewrite_costs).
"""

from __future__ import annotations

import math

import engine
from engine.players import MCTS_MOVES_PER_GAME
from engine.tables import positions_of
from pipeline.runs.config import RULES_MD
from pipeline.runs.costs import COSTS, rewrite_costs

# The entries of pipeline/costs.toml a run measures (those its comments mark "bench:"); the growths
# only with MODIAR_BENCH_STONES10=1, which measures a rule set far larger than RULES.md.
WRITTEN = (
    "scalar_game_seconds",
    "mcts_playouts_per_second",
    "mcts_batched_playouts_per_second",
    "mcts_batched_slowdown",
    "table_seconds_per_position",
    "table_bytes_per_position",
    "solve_seconds_per_position",
    "solve_bytes_per_position",
    "solve_seconds_growth",
    "solve_bytes_growth",
    "policy_seconds_per_position",
    "policy_bytes_per_position",
    "sweep_seconds_per_position",
    "sweep_bytes_per_position",
    "exact_cycling_seconds",
    "exact_wide_pair_seconds",
    "exact_narrow_seconds",
    "exact_worker_bytes",
    "atlas_seconds_per_position",
    "bench_seconds",
)
Measured = dict[str, float]  # entries of the cost file and what a run measured for them


def report_costs(measured: Measured, *, write: bool) -> None:
    """Print the cost file's entries this run measured beside the file's values; with ``write``,
    rewrite them in the file (the others kept)."""
    print("\nthe cost model (pipeline/costs.toml): what this run measured, beside the file")
    for name, value in measured.items():
        print(f"  {name:<34} {value:>12.3g}  (the file: {getattr(COSTS, name):.3g})")
    if write:
        changed = rewrite_costs({name: _whole(name, value) for name, value in measured.items()})
        print(f"  rewritten: {len(changed)} entries; the others kept")
    else:
        print("  the file is unchanged: modiar bench --write-costs (make bench COSTS=write) rewrites these entries")


def policy_costs(built: dict[str, tuple[float, float]]) -> Measured:
    """The policy tables' rates a position: a table without sweeps, the mean of heuristic's and
    perfect's (random's and greedy's take less; perfect's dials share perfect's values); a sweep
    of alphabeta(depth=d), from depth 40's time and depth 12's change log, each beyond that pass
    and over its d - 1 sweeps."""
    positions = positions_of(RULES_MD)
    passes = [built[spec] for spec in ("heuristic", "perfect")]
    seconds = sum(took for took, _ in passes) / len(passes) / positions
    beyond = max(held for _, held in passes) / positions
    measured = {"policy_seconds_per_position": seconds, "policy_bytes_per_position": max(1.0, beyond)}
    sweep = (built["alphabeta(depth=40)"][0] / positions - seconds) / 39
    log = (built["alphabeta(depth=12)"][1] / positions - beyond) / 11
    measured |= {
        name: value for name, value in (("sweep_seconds_per_position", sweep), ("sweep_bytes_per_position", log)) if value > 0
    }
    return measured


def mcts_costs(speeds: dict[int, tuple[float, float]]) -> Measured:
    """mcts's playouts a second, batched and through engine.play_game, from its games against
    random (playouts -> their games a second) with the fewest playouts (MCTS_MOVES_PER_GAME
    searched moves a game), and how much slower a playout of the most playouts is batched: the
    exponent of the playouts' ratio."""
    fewest, most = min(speeds), max(speeds)
    rate = {playouts: speeds[playouts][0] * MCTS_MOVES_PER_GAME * playouts for playouts in (fewest, most)}
    measured = {
        "mcts_batched_playouts_per_second": rate[fewest],
        "mcts_playouts_per_second": speeds[fewest][1] * MCTS_MOVES_PER_GAME * fewest,
    }
    if most > fewest and rate[most] < rate[fewest]:
        measured["mcts_batched_slowdown"] = math.log(rate[fewest] / rate[most]) / math.log(most / fewest)
    return measured


def exact_costs(outcomes: dict[str, tuple[float, float]]) -> Measured:
    """The exact outcomes' seconds by kind (pipeline.exact.cache.exact_seconds): the dials' self-play
    for the pairings that cycle (their mean), random's for two wide strategies, the slowest of the
    narrow ones; and the most a worker held."""
    dials = [outcomes[spec][0] for spec in ("perfect(epsilon=0.1)", "perfect(temperature=1.0)")]
    narrow = [outcomes[spec][0] for spec in ("greedy", "heuristic", "alphabeta(depth=4)", "perfect")]
    return {
        "exact_cycling_seconds": sum(dials) / len(dials),
        "exact_wide_pair_seconds": outcomes["random"][0],
        "exact_narrow_seconds": max(narrow),
        "exact_worker_bytes": max(held for _, held in outcomes.values()),
    }


def solve_growths(default: tuple[float, float], large: engine.Rules, measured: tuple[float, float]) -> Measured:
    """How the solver's seconds and bytes a position (``default``: RULES.md's, ``measured``:
    ``large``'s) grow with the positions: the exponents of the positions' ratio (none where a
    larger rule set took no more a position)."""
    ratio = math.log(positions_of(large) / positions_of(RULES_MD))
    growths = {"solve_seconds_growth": measured[0] / default[0], "solve_bytes_growth": measured[1] / default[1]}
    return {name: math.log(grown) / ratio for name, grown in growths.items() if grown > 1}


def _whole(name: str, value: float) -> float:
    """A measured figure as its entry takes it: bytes are whole."""
    return float(round(value)) if name.endswith("_bytes") or "_bytes_" in name else value
