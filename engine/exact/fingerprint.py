"""The reachable game of a rule set, as one SHA-256: two rule sets with the same fingerprint play
the same game from their start.

A game from the start is fixed by the positions reachable from it and, at each, its legal moves:
the child each leads to, the stones each captures (from either row, and from which pits) and the
events its position fires; plus the first moves as ply 0 plays them (the forfeit applied), the
stones a pit and the ply cap. Two rule sets that agree on all of it cannot be told apart by any
game, value or event count, whatever their fields say (the opponent's-row-only captures, for
example, leave the first move nothing to forfeit, so `modiar-rowsopponent` and
`modiar-rowsopponent-forfeitoff` are one game).
"""

from __future__ import annotations

import hashlib

import numpy as np

from engine.exact.exploit import reachable_positions
from engine.game import Rules
from engine.tables import PositionTables, first_moves

# The tables' arrays that a move or a position's events depend on, in the order they are hashed.
TABLE_ARRAYS = ("child", "captured", "own_captured", "capture_pits", "flags")


def game_fingerprint(rules: Rules, tables: PositionTables) -> str:
    """The SHA-256 (hex) of the game ``rules`` plays from its start: equal for two rule sets
    exactly when their reachable games are (the module docstring says what counts)."""
    if tables.rules.total_stones != rules.total_stones:
        raise ValueError(f"the tables are of {tables.rules.name}, not of {rules.name}")
    digest = hashlib.sha256()
    first = first_moves(rules)
    header = [rules.stones_per_pit, rules.ply_cap, first.start, len(first.pits)]
    digest.update(np.array(header, dtype=np.int64).tobytes())
    for part in (first.pits, first.children, first.captured):
        digest.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
    digest.update(" ".join(map(str, first.events)).encode())  # packed events outgrow 64 bits
    reachable = reachable_positions(rules, tables)
    digest.update(reachable.astype(np.int64).tobytes())
    for name in TABLE_ARRAYS:
        digest.update(np.ascontiguousarray(getattr(tables, name)[reachable]).tobytes())
    return digest.hexdigest()
