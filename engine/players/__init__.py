"""The strategies: what one is, the engine's own, making one by name, and the policy tables that make them exact."""

from __future__ import annotations

from engine.players.base import OneDrawStrategy, Strategy
from engine.players.choice import NO_MOVE, SCALE
from engine.players.near_cap import NearCap, RisingNearCap
from engine.players.policy import (
    NotATableStrategyError,
    PolicyTable,
    is_table_strategy,
    policies_folder,
    policy_path,
    policy_table,
    values_spec,
)
from engine.players.registry import UnknownStrategyError, canonical_spec, engine_strategy, make_strategy
from engine.players.search import MCTS_MOVES_PER_GAME, UCT_EXPLORATION, AlphaBetaStrategy, MctsStrategy, PerfectStrategy, solution
from engine.players.strategies import GreedyStrategy, RandomStrategy

__all__ = [
    "MCTS_MOVES_PER_GAME",
    "NO_MOVE",
    "SCALE",
    "UCT_EXPLORATION",
    "AlphaBetaStrategy",
    "GreedyStrategy",
    "MctsStrategy",
    "NearCap",
    "NotATableStrategyError",
    "OneDrawStrategy",
    "PerfectStrategy",
    "PolicyTable",
    "RandomStrategy",
    "RisingNearCap",
    "Strategy",
    "UnknownStrategyError",
    "canonical_spec",
    "engine_strategy",
    "is_table_strategy",
    "make_strategy",
    "policies_folder",
    "policy_path",
    "policy_table",
    "solution",
    "values_spec",
]
