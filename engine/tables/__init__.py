"""Every position of a rule set in arrays: the dense board index, the position tables, and the first move they leave out."""

from __future__ import annotations

from engine.tables.first_move import FirstMoves, checked_start, first_moves
from engine.tables.index import BoardIndex, board_index, position_count, positions_of, row_differences, row_stones, turned_ranks
from engine.tables.positions import (
    CONFIGURED,
    END_CODES,
    END_MASK,
    END_SHIFT,
    FLAGS,
    PositionTables,
    build_tables,
    cache_path,
    kept_tables,
    load_tables,
    table_rules,
    tables_folder,
)

__all__ = [
    "CONFIGURED",
    "END_CODES",
    "END_MASK",
    "END_SHIFT",
    "FLAGS",
    "BoardIndex",
    "FirstMoves",
    "PositionTables",
    "board_index",
    "build_tables",
    "cache_path",
    "checked_start",
    "first_moves",
    "kept_tables",
    "load_tables",
    "position_count",
    "positions_of",
    "row_differences",
    "row_stones",
    "table_rules",
    "tables_folder",
    "turned_ranks",
]
