"""The table strategies: random and greedy, each one random draw per turn.

What a strategy is (``Position``, ``Strategy``, ``OneDrawStrategy``) lives in
``engine.players.base``; the search strategies (heuristic, alphabeta, mcts, perfect) in
``engine.players.search``; ``engine.players.registry`` makes any of them from its spec string.
"""

from __future__ import annotations

from engine.game import Option, Rules, choice_index
from engine.players.base import OneDrawStrategy
from engine.players.values import Captures, Zero
from engine.tables import PositionTables


class RandomStrategy(OneDrawStrategy, name="random"):
    """Uniformly random among the legal moves."""

    spec = "random"
    uniform = True
    has_policy_table = True
    wide = True
    words = "plays a legal move chosen uniformly at random"

    def pick(self, options: tuple[Option, ...], draw: int) -> int:
        return (draw * len(options)) >> 32

    def policy_values(self, tables: PositionTables, rules: Rules) -> Zero:
        return Zero()


class GreedyStrategy(OneDrawStrategy, name="greedy"):
    """The largest immediate capture; ties broken uniformly at random."""

    spec = "greedy"
    has_policy_table = True
    words = "plays the move with the largest immediate capture, ties broken at random"

    def pick(self, options: tuple[Option, ...], draw: int) -> int:
        best = max(option.captured for option in options)
        tied = [index for index, option in enumerate(options) if option.captured == best]
        return tied[choice_index(draw, len(tied))]

    def policy_values(self, tables: PositionTables, rules: Rules) -> Captures:
        return Captures()
