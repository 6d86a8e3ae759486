"""The strong solution: every position's value under perfect play, by retrograde analysis, layer by layer."""

from __future__ import annotations

from engine.solver.layers import distinct, slice_indices
from engine.solver.solution import Solution, ValueLog, per_position, solution_path, solutions_folder, solve, sweep_values

__all__ = [
    "Solution",
    "ValueLog",
    "distinct",
    "per_position",
    "slice_indices",
    "solution_path",
    "solutions_folder",
    "solve",
    "sweep_values",
]
