"""What the solution says of every move and every state: the terms of engine.exact_quality.

A move's value to its mover is its capture minus the value of the position it leaves, V(child,
k - 1) with k the plies left (engine.solver.Solution's V_k); a position's value is its best
move's, and a move's loss is the best move's value minus its own (0 for a best move). The
forecast of a state after t plies, South's margin so far m plus the rest of the game under
perfect play, is F = m + V(p, cap - t) when South moves and m - V(p, cap - t) when North does.

``Judge`` gives, for positions of one parity at k plies left, the terms that depend on the
position alone (the loss a move gives away on average, its chance of being a mistake, whether
the turn is a decision, and so on: POSITION_TERMS) and, for states (position and margin), the
forecast and the chance that the move about to be played changes its sign (a lead change).
Far from the cap the values are those of the solution's last layer; ``dirty_from`` says, for
each position, the plies left below which its terms may differ from those (a child's value
changes, or the mover's chances do), so a ply recomputes only those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.players import SCALE, PolicyTable
from engine.solver import Solution, per_position
from engine.tables import PositionTables, row_differences

# The terms of a position's turn, in this order: the expected loss of the move played, the
# chance that it is a mistake (a loss > 0), whether the turn is a decision (two legal moves or
# more), whether exactly one move keeps the forecast, whether every move does, and the stake
# (the best move's value minus the worst's) of a decision.
POSITION_TERMS = ("stones_lost", "mistakes", "decisions", "only_move", "free_choice", "stake")


def last_changes(solution: Solution) -> np.ndarray:
    """Each position's last plies left k at which its value changes (0 for none), int64, with a
    0 appended for the child -1 (no move)."""
    last = per_position(np.maximum, lambda plies: plies.astype(np.int64), solution.change_plies, solution.offsets, 0)
    return np.append(last, 0)


@dataclass
class Moves:
    """The moves of some positions at k plies left: each pit's value to the mover (int64; the
    least int64 where the pit is not legal), which pits are legal, and the positions' values."""

    values: np.ndarray  # (n, 3)
    legal: np.ndarray  # (n, 3) bool
    best: np.ndarray  # (n,) int64: V(p, k)

    @property
    def loss(self) -> np.ndarray:
        loss: np.ndarray = np.where(self.legal, self.best[:, None] - self.values, 0)
        return loss


@dataclass(frozen=True)
class Solved:
    """What every Judge of a rule set reads of its solution: each position's last change of
    value and its value in the last layer (a 0 appended to each for the child -1)."""

    solution: Solution
    last: np.ndarray
    final: np.ndarray

    @classmethod
    def of(cls, solution: Solution) -> Solved:
        final = solution.values_of(np.arange(solution.size), solution.rules.ply_cap)
        return cls(solution, last_changes(solution), np.append(final, 0).astype(np.int64))


class Judge:
    """The solution's verdict on the moves of ``player``'s positions (engine.exact.quality)."""

    def __init__(self, solved: Solved, tables: PositionTables, player: PolicyTable) -> None:
        self.solution, self.tables, self.player = solved.solution, tables, player
        self.cap = solved.solution.rules.ply_cap
        self.rows = row_differences(solved.solution.rules.total_stones)
        self.last, self.final = solved.last, solved.final

    def moves(self, positions: np.ndarray, plies_left: int, *, far: bool = False) -> Moves:
        """The moves of ``positions`` with ``plies_left`` (>= 1) plies left; ``far``: with the
        children's values of the solution's last layer (right for a child whose value has not
        changed since plies_left - 1)."""
        child = self.tables.child[positions].astype(np.int64)
        legal = child >= 0
        if far:
            after = self.final[child]
        else:
            after = np.zeros(child.shape, dtype=np.int64)
            after[legal] = self.solution.values_of(child[legal], plies_left - 1)
        values = np.where(legal, self.tables.captured[positions].astype(np.int64) - after, np.iinfo(np.int64).min)
        best = values.max(axis=1)
        none = ~legal.any(axis=1)
        best[none] = self.rows[positions[none]]
        return Moves(values, legal, best)

    def chances(self, positions: np.ndarray, plies_left: int, *, far: bool = False) -> np.ndarray:
        """The mover's chance of each pit (n, 3): with ``far``, those of its far classes as the
        exact graph's matrices hold them (0 at a position marked VARIES)."""
        player = self.player
        if not far:
            return player.chances(player.classes_at(positions, plies_left)) / SCALE
        classes = player.far[positions].astype(np.int64)
        cycling = classes == player.varies
        classes[cycling] = 0
        chances: np.ndarray = player.chances(classes) / SCALE
        chances[cycling] = 0
        return chances

    def dirty_from(self, positions: np.ndarray) -> np.ndarray:
        """For each position, the plies left below which its terms may differ from the far ones:
        one more than its children's last change, or where the mover's chances may change."""
        child = self.tables.child[positions].astype(np.int64)
        below: np.ndarray = self.last[child].max(axis=1) + 1
        dirty: np.ndarray = np.maximum(below, self.player.unsettled_below(positions).astype(np.int64))
        return dirty


def position_terms(moves: Moves, chances: np.ndarray) -> np.ndarray:
    """The POSITION_TERMS (n, 6) of positions with these moves, the mover choosing by ``chances``."""
    loss = moves.loss
    legal = moves.legal
    count = legal.sum(axis=1)
    keeps = (legal & (loss == 0)).sum(axis=1)
    decision = count >= 2
    terms = np.empty((len(count), len(POSITION_TERMS)))
    terms[:, 0] = (chances * loss).sum(axis=1)
    terms[:, 1] = (chances * (loss > 0)).sum(axis=1)
    terms[:, 2] = decision
    terms[:, 3] = decision & (keeps == 1)
    terms[:, 4] = decision & (keeps == count)
    terms[:, 5] = np.where(decision, np.where(legal, loss, 0).max(axis=1), 0)
    return terms


def forecasts(moves: Moves, owner: np.ndarray, margin: np.ndarray, south_moves: bool) -> np.ndarray:
    """The forecast of states (margin so far, and the row of their position in ``moves``)."""
    value: np.ndarray = moves.best[owner]
    forecast: np.ndarray = margin + value if south_moves else margin - value
    return forecast


def lead_changes(moves: Moves, chances: np.ndarray, owner: np.ndarray, forecast: np.ndarray, south_moves: bool) -> np.ndarray:
    """Each state's chance that the move played changes the sign of the forecast: the forecast
    after a move is the one before less the move's loss, to South's side when South moves."""
    loss = moves.loss[owner]
    after = forecast[:, None] - loss if south_moves else forecast[:, None] + loss
    changes = np.sign(after) != np.sign(forecast)[:, None]
    changed: np.ndarray = (chances[owner] * changes).sum(axis=1)
    return changed
