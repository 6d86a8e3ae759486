"""Modiar: the bit-packed engine. The rules are the repository's RULES.md, every field a variant.

>>> import engine
>>> board = engine.start_board()
>>> engine.legal_moves(board, mover=0, ply=0)
(0, 1, 2)
"""

from engine.api import MoveResult, apply_move, end_event, legal_moves, perft, perft_counts, position, rotate, start_board
from engine.batch import play_batch
from engine.board import Board, pack, parse_board, render, unpack
from engine.cache import cache_folder, set_cache_folder
from engine.deprecation import renamed
from engine.errors import IllegalMoveError
from engine.events import END_EVENTS, EVENTS, TURN_EVENTS, possible_events
from engine.exact import ExactLengths, ExactOutcome, ExactProgress, exact_lengths, exact_outcome
from engine.exploit import Exploitability, exploitability
from engine.game import GameRecord, play_game
from engine.game_batch import GameBatch
from engine.policy import PolicyTable, is_table_strategy, policy_table
from engine.registry import UnknownStrategyError, canonical_spec, make_strategy
from engine.release import release_caches
from engine.rng import Rng
from engine.rules import Rules
from engine.solver import Solution, solve
from engine.strategy_base import OneDrawStrategy, Position, Strategy
from engine.version import ENGINE_VERSION

__all__ = [
    "END_EVENTS",
    "ENGINE_VERSION",
    "EVENTS",
    "TURN_EVENTS",
    "Board",
    "ExactLengths",
    "ExactOutcome",
    "ExactProgress",
    "Exploitability",
    "GameBatch",
    "GameRecord",
    "IllegalMoveError",
    "MoveResult",
    "OneDrawStrategy",
    "PolicyTable",
    "Position",
    "Rng",
    "Rules",
    "Solution",
    "Strategy",
    "UnknownStrategyError",
    "apply_move",
    "cache_folder",
    "canonical_spec",
    "end_event",
    "exact_lengths",
    "exact_outcome",
    "exploitability",
    "is_table_strategy",
    "legal_moves",
    "make_strategy",
    "pack",
    "parse_board",
    "perft",
    "perft_counts",
    "play_batch",
    "play_game",
    "policy_table",
    "position",
    "possible_events",
    "release_caches",
    "render",
    "rotate",
    "set_cache_folder",
    "solve",
    "start_board",
    "unpack",
]


def __getattr__(name: str) -> object:
    if name == "TableStrategy":  # its old name
        renamed("engine.TableStrategy", "engine.OneDrawStrategy")
        return OneDrawStrategy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
