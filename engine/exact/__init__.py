"""Exact outcomes, exploitability, and the fingerprint of the game a rule set plays from its start."""

from __future__ import annotations

from engine.exact.exploit import Exploitability, exploitability, reachable_positions
from engine.exact.fingerprint import game_fingerprint
from engine.exact.outcome import BUILDING, TOLERANCE, ExactLengths, ExactOutcome, ExactProgress, exact_lengths, exact_outcome
from engine.exact.quality import MEASURES, ExactQuality, exact_quality

__all__ = [
    "BUILDING",
    "MEASURES",
    "TOLERANCE",
    "ExactLengths",
    "ExactOutcome",
    "ExactProgress",
    "ExactQuality",
    "Exploitability",
    "exact_lengths",
    "exact_outcome",
    "exact_quality",
    "exploitability",
    "game_fingerprint",
    "reachable_positions",
]
