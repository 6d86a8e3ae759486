"""make bench's exact quality: engine.exact_quality beside engine.exact_outcome of the same
self-play, each in a fresh process once the tables, policy tables and solution are loaded; the
target is at most twice the outcome's time and memory."""

from __future__ import annotations

import resource
import time

import engine
from engine.players import policy_table, solution
from engine.tables import load_tables

# Self-play timed: a wide strategy (every position reachable), a dial whose games cycle, a narrow one.
QUALITY_SPECS = ("random", "perfect(temperature=1.0)", "greedy")
QUALITY_RATIO = 2.0


def quality_self_play(spec: str) -> tuple[float, float]:
    """engine.exact_quality of ``spec`` against itself once everything it reads is loaded: its
    seconds and the process's peak memory in bytes."""
    rules = engine.Rules()
    tables = load_tables(rules, progress=False)
    policy_table(spec, rules, tables=tables)
    solution(rules)
    start = time.perf_counter()
    quality = engine.exact_quality(spec, spec, rules=rules, tables=tables)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    measures = quality.as_dict()
    print(
        f"  {spec:<26} lead changes {measures['lead_changes']:.4f}, comeback {measures['comeback']:.4f}, "
        f"decided at ply {measures['decided_ply']:.2f}, unresolved {quality.unresolved:.1e}"
    )
    return took, peak


def quality_line(spec: str, outcome: tuple[float, float], quality: tuple[float, float]) -> str:
    """One line of the comparison: both times and peaks, their ratios and the verdict."""
    time_ratio, memory_ratio = quality[0] / outcome[0], quality[1] / outcome[1]
    met = time_ratio <= QUALITY_RATIO and memory_ratio <= QUALITY_RATIO
    verdict = "meets the target" if met else "MISSES the target"
    return (
        f"  {spec:<26} outcome {outcome[0]:6.1f} s, {outcome[1] / 2**30:.2f} GiB; quality {quality[0]:6.1f} s, "
        f"{quality[1] / 2**30:.2f} GiB: {time_ratio:.2f}x the time, {memory_ratio:.2f}x the memory "
        f"[<= {QUALITY_RATIO:.0f}x: {verdict}]"
    )
