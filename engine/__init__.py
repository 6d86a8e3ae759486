"""Modiar: the bit-packed engine. The rules are the repository's RULES.md, every field a variant.

>>> import engine
>>> board = engine.start_board()
>>> engine.legal_moves(board, mover=0, ply=0)
(0, 1, 2)
"""

from engine.exact import ExactLengths, ExactOutcome, ExactProgress, Exploitability, exact_lengths, exact_outcome, exploitability
from engine.game import (
    END_EVENTS,
    EVENTS,
    TURN_EVENTS,
    Board,
    IllegalMoveError,
    MoveResult,
    Position,
    Rng,
    Rules,
    apply_move,
    end_event,
    legal_moves,
    pack,
    parse_board,
    perft,
    perft_counts,
    position,
    possible_events,
    render,
    rotate,
    start_board,
    unpack,
)
from engine.play import GameBatch, GameRecord, play_batch, play_game
from engine.players import (
    OneDrawStrategy,
    PolicyTable,
    Strategy,
    UnknownStrategyError,
    canonical_spec,
    is_table_strategy,
    make_strategy,
    policy_table,
)
from engine.solver import Remoteness, Solution, analyse, remoteness, solve
from engine.store import ENGINE_VERSION, cache_folder, release_caches, set_cache_folder

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
    "Remoteness",
    "Rng",
    "Rules",
    "Solution",
    "Strategy",
    "UnknownStrategyError",
    "analyse",
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
    "remoteness",
    "render",
    "rotate",
    "set_cache_folder",
    "solve",
    "start_board",
    "unpack",
]
