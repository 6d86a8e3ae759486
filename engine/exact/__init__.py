"""Exact outcomes: the distribution of the games two table strategies play, and exploitability."""

from __future__ import annotations

from engine.exact.exploit import Exploitability, exploitability, reachable_positions
from engine.exact.outcome import BUILDING, TOLERANCE, ExactLengths, ExactOutcome, ExactProgress, exact_lengths, exact_outcome

__all__ = [
    "BUILDING",
    "TOLERANCE",
    "ExactLengths",
    "ExactOutcome",
    "ExactProgress",
    "Exploitability",
    "exact_lengths",
    "exact_outcome",
    "exploitability",
    "reachable_positions",
]
