"""The strong solution: every position's value under perfect play, by retrograde analysis, layer by layer, and its remoteness."""

from __future__ import annotations

from engine.solver.layers import distinct, slice_indices
from engine.solver.remoteness import AT_CAP, Remoteness, remoteness, remoteness_path
from engine.solver.solution import Solution, solution_path, solutions_folder, solve
from engine.solver.value_log import ValueLog, per_position, sweep_values
from engine.solver.verdict import CAP, MOVE_COLUMNS, PLAY, Verdict, analyse, decided_by, start_values, start_verdict, verdict

__all__ = [
    "AT_CAP",
    "CAP",
    "MOVE_COLUMNS",
    "PLAY",
    "Remoteness",
    "Solution",
    "ValueLog",
    "Verdict",
    "analyse",
    "decided_by",
    "distinct",
    "per_position",
    "remoteness",
    "remoteness_path",
    "slice_indices",
    "solution_path",
    "solutions_folder",
    "solve",
    "start_values",
    "start_verdict",
    "sweep_values",
    "verdict",
]
