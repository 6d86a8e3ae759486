"""Playing games: one game, batches in lockstep and their columns, mcts's searches in lockstep, and replay."""

from __future__ import annotations

from engine.play.batch import batchable, play_batch
from engine.play.columns import END_REASONS, GameBatch, concatenate
from engine.play.game import GameRecord, play_game
from engine.play.mcts import TREE_BYTES
from engine.play.replays import FLAG_BITS, Replay, replay

__all__ = [
    "END_REASONS",
    "FLAG_BITS",
    "TREE_BYTES",
    "GameBatch",
    "GameRecord",
    "Replay",
    "batchable",
    "concatenate",
    "play_batch",
    "play_game",
    "replay",
]
